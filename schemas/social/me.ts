// GET /api/social/me (ours, issue 24): what the web app's home shows the signed-in member: the
// account (identity address, #asset id, handle), its on-service balance and where to top it up,
// and its posts with their hosting state (renew and takedown are the composer routes). And the
// wallet-link QR of the signed-in account (POST /api/social/wallet-link, its state by GET): how an
// account that signing in made links its wallet's xpub without the CLI's `social link-token`.
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { linkQrOf, linkStateOf } from "../common/walletLinkQr.ts"
import { Weight } from "../common/Weight.ts"
import { NotFound, ServiceUnavailable } from "../common/ErrorBody.ts"
import { SessionAuth } from "./security.ts"

export const MyPost = Schema.Struct({
  id: Schema.String,
  shortId: Schema.String,
  kind: Schema.String,
  body: Schema.String.annotations({ description: "The first 280 characters" }),
  state: Schema.String.annotations({ description: "hosted, grace, unpinned, taken_down, moderated, awaiting_signature" }),
  paidUntil: Schema.String.annotations({ description: "ISO 8601: hosting is paid until then" }),
  createdAt: Schema.String
})

export const Me = Schema.Struct({
  address: Schema.String,
  assetId: Schema.NullOr(Schema.String),
  handle: Schema.NullOr(Schema.String),
  balance: Schema.String.annotations({ description: "On-service balance, in the ledger coin" }),
  topUpAddress: Schema.String.annotations({ description: "Pay this address from the identity address to top up the balance" }),
  servicePosting: Schema.Boolean.annotations({ description: "true: the service holds this account's keys and posts for it; false: each stamp is signed by the member's wallet" }),
  xpubLinked: Schema.Boolean.annotations({ description: "true: the service has the account's xpub (or its seed) to derive post addresses from; false: link the wallet first (POST /api/social/wallet-link)" }),
  posts: Schema.Array(MyPost).annotations({ description: "Newest first, at most 100" })
})

export const SocialLinkQr = linkQrOf("/api/social/wallet-link/{challengeId}", {})
export const SocialLinkState = linkStateOf("the wallet linked its xpub with it", {})
const challengeParam = HttpApiSchema.param("challengeId", Schema.String.pipe(Schema.maxLength(64)))

export const MeGroup = HttpApiGroup.make("me")
  .add(HttpApiEndpoint.get("me", "/api/social/me").addSuccess(Me).addError(ServiceUnavailable)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "The signed-in member's account, balance, top-up address and posts (session, weight 5)"))
  .add(HttpApiEndpoint.post("linkQr", "/api/social/wallet-link").addSuccess(SocialLinkQr, { status: 201 }).addError(ServiceUnavailable)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "A single-use wallet-link QR for the signed-in account, valid 5 minutes: the wallet links its xpub with it (session, weight 5)"))
  .add(HttpApiEndpoint.get("linkState")`/api/social/wallet-link/${challengeParam}`.addSuccess(SocialLinkState).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "The live state of one of your wallet-link QRs; poll every 2 s (session, weight 1)"))
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Me")
