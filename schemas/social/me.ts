// GET /api/social/me (ours, issue 24): what the web app's home shows the signed-in member: the
// account (identity address, #asset id, handle), its on-service balance and where to top it up,
// and its posts with their hosting state (renew and takedown are the composer routes).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"
import { ServiceUnavailable } from "../common/ErrorBody.ts"
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
  posts: Schema.Array(MyPost).annotations({ description: "Newest first, at most 100" })
})

export const MeGroup = HttpApiGroup.make("me")
  .add(HttpApiEndpoint.get("me", "/api/social/me").addSuccess(Me).addError(ServiceUnavailable)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "The signed-in member's account, balance, top-up address and posts (session, weight 5)"))
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Me")
