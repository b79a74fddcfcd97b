// Member-signed stamps over HTTP (docs/social.md, "Member-signed stamps"): an account linked by
// xpub only gets its stamps as PSBTs from the composer routes (202), reads them again here, and
// sends them back signed. Session routes; the author only.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonBody } from "../common/jsonBody.ts"
import { text } from "../common/text.ts"
import { Weight } from "../common/Weight.ts"
import { BadRequest, ContentConflict, Forbidden, NotFound, ServiceUnavailable } from "./errors.ts"
import { SignedStamps, UnsignedStamps } from "./post.ts"
import { SessionAuth } from "./security.ts"

const Signed = Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20_000))).pipe(Schema.minItems(1), Schema.maxItems(50))

export const SignaturesBody = Schema.Struct({
  psbts: Schema.optional(Signed).annotations({ description: "Signed PSBTs (base64), finalized or with the partial signature" }),
  transactions: Schema.optional(Signed).annotations({ description: "Signed raw transactions (hex)" })
})

/** What the page's QR and deep link hand the member's wallet (GET /api/social/posts/{id}/wallet-signing). */
export const WalletSigning = Schema.Struct({
  requestId: Schema.String,
  action: Schema.Literal("publish", "takedown", "renew", "metadata"),
  url: Schema.String.annotations({ description: "What the QR holds: GET it (no session) for the PSBTs, POST {token, psbts} to its path signed. Good for this action only, until expiresAt" }),
  deepLink: Schema.String.annotations({ description: "shardline-wallet://sign?url=<the URL>: for a wallet on the same device" }),
  expiresAt: Schema.String.annotations({ description: "ISO 8601: the action lapses unsigned then" }),
  pollIntervalMs: Schema.Int.annotations({ description: "How often a page looks whether the signatures arrived (GET /api/public/post/{id} answers 404 until then)" })
})

export const StampSigningQuery = Schema.Struct({ token: text(200) })
export const StampSigningBody = Schema.Struct({
  token: text(200).annotations({ description: "The signing code from the URL's query" }),
  ...SignaturesBody.fields
})

const postIdParam = Schema.Struct({ id: Schema.String.pipe(Schema.maxLength(64)) })
const commentIdParam = Schema.Struct({ id: Schema.String.pipe(Schema.maxLength(64)), commentId: Schema.String.pipe(Schema.maxLength(64)) })

export const MemberSignedGroup = HttpApiGroup.make("memberSigned")
  .add(HttpApiEndpoint.get("unsigned", "/api/social/posts/:id/unsigned").setPath(postIdParam).addSuccess(UnsignedStamps)
    .addError(Forbidden).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Description, "The stamps of the author action waiting for the member's signatures (accounts linked by xpub only): one PSBT per stamp, each spending its own sponsor coin. 404 when nothing waits.")
    .annotate(OpenApi.Summary, "Unsigned stamps of a member-signed post (session, author)"))
  .add(HttpApiEndpoint.post("signatures", "/api/social/posts/:id/signatures").setPath(postIdParam).setPayload(JsonBody(SignaturesBody)).addSuccess(SignedStamps)
    .addError(BadRequest).addError(Forbidden).addError(NotFound).addError(ContentConflict).addError(ServiceUnavailable)
    .annotate(Weight, 5)
    .annotate(OpenApi.Description, "Every stamp of the waiting action, signed (psbts or transactions, any order). Each must be exactly the transaction built, signed SIGHASH_ALL by the post address's key; otherwise 400 and nothing is sent. Recorded, the action takes effect, then broadcast. Sending the same signatures again re-sends the recorded transactions.")
    .annotate(OpenApi.Summary, "Submit the member's signed stamps (session, author, weight 5)"))
  .add(HttpApiEndpoint.get("commentUnsigned", "/api/social/posts/:id/comments/:commentId/unsigned").setPath(commentIdParam).addSuccess(UnsignedStamps)
    .addError(Forbidden).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Description, "A member-signed comment's X waiting for the commenter's signature (the PSBT the comment route answered with 202; `commentId` is its requestId), read again. 404 when it no longer waits (signed, or lapsed).")
    .annotate(OpenApi.Summary, "Unsigned stamp of a member-signed comment (session, the commenter)"))
  .add(HttpApiEndpoint.post("commentSignatures", "/api/social/posts/:id/comments/:commentId/signatures").setPath(commentIdParam).setPayload(JsonBody(SignaturesBody)).addSuccess(SignedStamps)
    .addError(BadRequest).addError(Forbidden).addError(NotFound).addError(ContentConflict).addError(ServiceUnavailable)
    .annotate(Weight, 5)
    .annotate(OpenApi.Description, "An xpub-only commenter's X, signed (the PSBT the comment route answered with 202; `commentId` is its requestId). Checked, recorded (the comment exists from then on), then broadcast; the same signatures again re-send the recorded transaction.")
    .annotate(OpenApi.Summary, "Submit a member-signed comment's signed stamp (session, the commenter, weight 5)"))
  .add(HttpApiEndpoint.get("walletSigning", "/api/social/posts/:id/wallet-signing").setPath(postIdParam).addSuccess(WalletSigning)
    .addError(Forbidden).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Description, "The author's waiting action as a QR and deep link for the member's wallet app: a URL with a signing code where the wallet reads the PSBTs and sends them back signed without a session. 404 when nothing waits.")
    .annotate(OpenApi.Summary, "Hand a waiting action's stamps to the wallet app (session, author)"))
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Member-signed stamps")

/** The wallet app's side: no session, the signing code from the QR (src/social/posts/walletSigning.ts). */
export const StampSigningGroup = HttpApiGroup.make("stampSigning")
  .add(HttpApiEndpoint.get("read", "/api/public/v1/stamp-signing").setUrlParams(StampSigningQuery).addSuccess(UnsignedStamps)
    .addError(BadRequest).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Description, "The PSBTs of the action a signing code is for (signaturesUrl: this path). 400 for a code this service did not make; 404 once the action no longer waits (signed, lapsed).")
    .annotate(OpenApi.Summary, "A waiting action's stamps for the wallet app (signing code, no session)"))
  .add(HttpApiEndpoint.post("submit", "/api/public/v1/stamp-signing").setPayload(JsonBody(StampSigningBody)).addSuccess(SignedStamps)
    .addError(BadRequest).addError(Forbidden).addError(NotFound).addError(ContentConflict).addError(ServiceUnavailable)
    .annotate(Weight, 5)
    .annotate(OpenApi.Description, "The wallet sends the action's stamps signed, with the signing code: checked, recorded and broadcast exactly as POST /api/social/posts/{id}/signatures does.")
    .annotate(OpenApi.Summary, "Submit the signed stamps from the wallet app (signing code, no session, weight 5)"))
  .annotate(OpenApi.Title, "Member-signed stamps: the wallet app")
