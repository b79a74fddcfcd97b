// Messages every single-use link token entity takes (desk DeskLinkToken, social SocialLinkToken;
// entity id: the token's SHA-256 in hex, so the token itself never sits in cluster storage), and
// the refusal a redeem answers. Mint and Expire are persisted: Mint is what the CLI sends through
// cluster storage, Expire is the durable 5-minute timer the entity sends itself.
import { DeliverAt } from "@effect/cluster"
import { DateTime, PrimaryKey, Schema } from "effect"

export class MintLinkToken extends Schema.Class<MintLinkToken>("LinkToken/Mint")({
  /** desk: the member id; social: the account's identity address. */
  subject: Schema.String,
  challengeId: Schema.String,
  allowRebind: Schema.Boolean,
  issuedAtMs: Schema.Number,
  expiresAtMs: Schema.Number,
  /**
   * The listener's public base URL the token's link was made with (its QR's URL). The manifest's
   * `from` and `callback_url` come from it on every node, so any node can serve and redeem a link
   * any node issued. Absent in Mints stored before it existed: the serving node's own URL then.
   */
  base: Schema.optional(Schema.String)
}) {
  [PrimaryKey.symbol]() {
    return `mint:${this.challengeId}`
  }
}

export class ExpireLinkToken extends Schema.Class<ExpireLinkToken>("LinkToken/Expire")({
  dueAtMs: Schema.Number
}) {
  // One expiry per token (a token is minted once).
  [PrimaryKey.symbol]() {
    return "expire"
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

/** Why a redeem (or a sign-in step) was refused: the HTTP status and error code it answers. */
export class LinkRefused extends Schema.TaggedError<LinkRefused>()("LinkRefused", {
  status: Schema.Literal(400, 401, 403, 409, 410),
  code: Schema.String,
  message: Schema.String
}) {}
