// Entities of social wallet identity. SocialLinkToken (entity id: the token's SHA-256 hex) owns one
// wallet-link token; SignInChallenge (entity id: the challenge id) owns one QR sign-in. Mint of a
// link token is persisted (the CLI sends it through cluster storage); each entity's Expire is its
// durable 5-minute timer. The other steps are not persisted: their replies carry one-time tokens
// and sessions that must never rest in cluster storage.
import { ClusterSchema, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Schema } from "effect"
import { ExpireLinkToken, LinkRefused, MintLinkToken } from "../common/linkToken.ts"
import { SocialLinked, SocialLinkEnvelope } from "./walletLink.ts"

export class RedeemSocialLink extends Schema.Class<RedeemSocialLink>("SocialLinkToken/Redeem")({
  envelope: SocialLinkEnvelope
}) {}

export const SocialLinkToken = Entity.make("SocialLinkToken", [
  Rpc.make("Mint", { payload: MintLinkToken }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Expire", { payload: ExpireLinkToken }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Redeem", { payload: RedeemSocialLink, success: SocialLinked, error: LinkRefused })
])

export { ExchangeToken, ExpireChallenge, MintChallenge, PollStatus, SignedCallback, SignInChallenge } from "../common/signIn.ts"
