// Entities of social wallet identity. SocialLinkToken (entity id: the token's SHA-256 hex) owns one
// wallet-link token; SignInChallenge (entity id: the challenge id) owns one QR sign-in. Mint of a
// link token is persisted (the CLI sends it through cluster storage); each entity's Expire is its
// durable 5-minute timer. The other steps are not persisted: their replies carry one-time tokens
// and sessions that must never rest in cluster storage.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"
import { ExpireLinkToken, LinkRefused, MintLinkToken } from "../common/linkToken.ts"
import { CallbackAccepted, SessionIssued, WalletStatus } from "./signin.ts"
import { SocialLinked, SocialLinkEnvelope } from "./walletLink.ts"

export class RedeemSocialLink extends Schema.Class<RedeemSocialLink>("SocialLinkToken/Redeem")({
  envelope: SocialLinkEnvelope
}) {}

export const SocialLinkToken = Entity.make("SocialLinkToken", [
  Rpc.make("Mint", { payload: MintLinkToken }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Expire", { payload: ExpireLinkToken }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Redeem", { payload: RedeemSocialLink, success: SocialLinked, error: LinkRefused })
])

export class MintChallenge extends Schema.Class<MintChallenge>("SignInChallenge/Mint")({
  nonce: Schema.String,
  origin: Schema.String,
  browserHash: Schema.String,
  issuedAtMs: Schema.Number,
  expiresAtMs: Schema.Number
}) {}

export class ExpireChallenge extends Schema.Class<ExpireChallenge>("SignInChallenge/Expire")({
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return "expire"
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

export class SignedCallback extends Schema.Class<SignedCallback>("SignInChallenge/Callback")({
  address: Schema.String,
  signature: Schema.String
}) {}

export class PollStatus extends Schema.Class<PollStatus>("SignInChallenge/Status")({
  /** SHA-256 of the poller's sign-in cookie, if it sent one: only the minting browser gets the token. */
  browserHash: Schema.NullOr(Schema.String)
}) {}

export class ExchangeToken extends Schema.Class<ExchangeToken>("SignInChallenge/Exchange")({
  tokenHash: Schema.String
}) {}

export const SignInChallenge = Entity.make("SignInChallenge", [
  Rpc.make("Mint", { payload: MintChallenge, error: LinkRefused }),
  Rpc.make("Expire", { payload: ExpireChallenge }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Callback", { payload: SignedCallback, success: CallbackAccepted, error: LinkRefused }),
  Rpc.make("Status", { payload: PollStatus, success: WalletStatus, error: LinkRefused }),
  Rpc.make("Exchange", { payload: ExchangeToken, success: SessionIssued, error: LinkRefused })
])
