// Wallet linking and rewards (spec: "Wallet-link manifest and payload", "Wallet linking and
// rewards", "Rewards balance response"). The payload carries the spec's own snake_case names; the
// manifest is the payload's fields the wallet copies plus what the spec says it states (what to
// sign, wanted chains, who asks, expiry, whether rebinding is allowed). Every string has a limit.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, Conflict, Gone } from "../common/ErrorBody.ts"
import { text } from "../common/text.ts"
import { Weight } from "../common/Weight.ts"
import { Forbidden, Unauthorized } from "./errors.ts"
import { prefix } from "./key.ts"
import { DeskKeyRewards } from "./security.ts"

export const linkType = "wl-link-xpubs" as const
export const LinkChain = Schema.Literal("LEDGER", "EVM", "BASE")
export type LinkChain = typeof LinkChain.Type


/** What the wallet signs: canonicalJson(payload), BIP-137, ledger prefix, key m/44'/696969'/0'/0/0. */
export const WalletLinkPayload = Schema.Struct({
  v: Schema.Literal(1),
  type: Schema.Literal(linkType),
  challenge_id: text(64),
  from: text(200),
  callback_url: text(2048),
  chains: Schema.Array(LinkChain).pipe(Schema.minItems(1), Schema.maxItems(3)),
  xpubs: Schema.Struct({
    LEDGER: text(200).annotations({ description: "Account-level extended public key (m/44'/696969'/0'), watch-only" }),
    EVM: text(200).annotations({ description: "A 0x address or an EVM extended public key (its m/0/0 is taken): the USDC payout address" }),
    BASE: Schema.optional(text(200)).annotations({ description: "Defaults to EVM" })
  }),
  wallet: text(64).annotations({ description: "Wallet app label" }),
  exp: Schema.Int.annotations({ description: "Unix seconds, from the manifest" }),
  issued_at: text(40).annotations({ description: "ISO 8601 with milliseconds, from the manifest" })
})
export type WalletLinkPayload = typeof WalletLinkPayload.Type

export const WalletLinkEnvelope = Schema.Struct({
  payload: WalletLinkPayload,
  signature: text(200).annotations({ description: "Base64 BIP-137 signature of canonicalJson(payload)" }),
  address: text(100).annotations({ description: "Legacy base58 signing address (T…) of m/44'/696969'/0'/0/0" })
})
export type WalletLinkEnvelope = typeof WalletLinkEnvelope.Type

export const WalletLinkManifest = Schema.Struct({
  v: Schema.Literal(1),
  type: Schema.Literal(linkType),
  challenge_id: Schema.String,
  from: Schema.String.annotations({ description: "Who asks: the desk's origin" }),
  callback_url: Schema.String.annotations({ description: "Where to POST the envelope: this link, with its single-use token" }),
  chains: Schema.Array(LinkChain).annotations({ description: "Wanted chains; the first is the base ledger" }),
  exp: Schema.Int.annotations({ description: "Unix seconds: the token's expiry" }),
  issued_at: Schema.String,
  expires_at: Schema.String.annotations({ description: "The same expiry, ISO 8601" }),
  allow_rebind: Schema.Boolean.annotations({ description: "Whether a wallet other than the member's linked one may replace it" }),
  sign: Schema.Struct({
    message: Schema.Literal("canonicalJson(payload)"),
    scheme: Schema.Literal("BIP-137"),
    encoding: Schema.Literal("base64"),
    prefix: Schema.String.annotations({ description: "The ledger's message magic" }),
    path: Schema.String.annotations({ description: "The signing key: m/44'/696969'/0'/0/0" })
  }),
  wants: Schema.Struct({ LEDGER: Schema.String, EVM: Schema.String, BASE: Schema.String })
})
export type WalletLinkManifest = typeof WalletLinkManifest.Type

export const WalletLinked = Schema.Struct({
  api_key: Schema.String.annotations({ description: "The member's new partner key (scopes cashout, rewards), shown once; the previous key is revoked" }),
  scopes: Schema.Array(Schema.String),
  member_id: Schema.String,
  signing_address: Schema.String,
  token_payout_address: Schema.String,
  usdc_payout_address: Schema.String,
  base_payout_address: Schema.String,
  revoked_keys: Schema.Int.annotations({ description: "How many earlier keys of the member this link revoked" })
})
export type WalletLinked = typeof WalletLinked.Type

export const LinkTokenParam = Schema.Struct({ token: text(100) })
/** The POST may come to the bare path: the token is then read from the signed `payload.callback_url`. */
export const LinkTokenPostParam = Schema.Struct({
  token: Schema.optional(text(100)).annotations({ description: "The single-use token; when absent, the one inside payload.callback_url" })
})

export const WalletLinkGroup = HttpApiGroup.make("walletLink")
  .add(HttpApiEndpoint.get("manifest", `${prefix}/wallet-link`).setUrlParams(LinkTokenParam)
    .addSuccess(WalletLinkManifest)
    .addError(Gone)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "The link manifest: JSON with Accept: application/json, otherwise an HTML page holding <script type=\"wl-link-xpubs\"> (single-use token, weight 1)"))
  .add(HttpApiEndpoint.post("link", `${prefix}/wallet-link`).setUrlParams(LinkTokenPostParam).setPayload(WalletLinkEnvelope)
    .addSuccess(WalletLinked)
    .addError(Unauthorized).addError(Forbidden).addError(Conflict).addError(Gone).addError(BadRequest)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Link the wallet: BIP-137 over canonicalJson(payload); answers a new partner key (single-use token in the query or in payload.callback_url, weight 5)"))
  .annotate(OpenApi.Title, "Wallet linking")

export const rewardsDaysMax = 365
export const RewardsQuery = Schema.Struct({
  address: text(100),
  days: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, rewardsDaysMax)), { default: () => 30 })
})

export const RewardsMatch = Schema.Literal("signing_address", "derived_address", "token_inbox", "evm_address", "base_address")

export const RewardsBalance = Schema.Struct({
  address: Schema.String,
  matched: RewardsMatch.annotations({ description: "Which field of the linked wallet the address is" }),
  tokens: Schema.Array(Schema.Struct({
    asset: Schema.NullOr(Schema.String).annotations({ description: "The token's registry code (SUSD, XUSD); null for an operator's override property the registry does not know" }),
    propertyId: Schema.Int,
    currentBalance: Schema.String.annotations({ description: "This token's balance of every derived address now, decimal" }),
    averageDailyBalance: Schema.String.annotations({ description: "This token's mean over the window's samples, decimal" })
  })).annotations({ description: "Per token sampled: the desk's dollar tokens unless the operator configured one property" }),
  currentBalance: Schema.String.annotations({ description: "Total balance of the sampled tokens on every derived address now, decimal" }),
  averageDailyBalance: Schema.String.annotations({ description: "Mean of the hourly samples taken in the window (missing slots excluded), decimal" }),
  days: Schema.Int,
  sampleCount: Schema.Int.annotations({ description: "Hourly samples taken in the window" }),
  missingCount: Schema.Int.annotations({ description: "Hourly slots in the window the cluster missed (recorded, never invented)" }),
  lastSampleAt: Schema.NullOr(Schema.String)
})
export type RewardsBalance = typeof RewardsBalance.Type

export const RewardsGroup = HttpApiGroup.make("rewards")
  .add(HttpApiEndpoint.get("balance", `${prefix}/rewards/balance`).setUrlParams(RewardsQuery)
    .addSuccess(RewardsBalance)
    .annotate(Weight, 2)
    .annotate(OpenApi.Summary, "A linked wallet's current and average token balance (scope rewards, weight 2)"))
  .middleware(DeskKeyRewards)
  .annotate(OpenApi.Title, "Rewards")
