// Reserve transparency (spec: Transparency) and the two public registries (spec: Dollar tokens,
// Wrapping): keyless JSON any web page may read (`Access-Control-Allow-Origin: *`), cached by
// the node and by clients (`Cache-Control: public, max-age=30`, inside the spec's 15–120 s).
// Amounts are exact decimal strings in the asset's own unit; ratios are numbers (6 decimals).
// Field names beyond the spec's words are ours (docs/desk.md, "Transparency").
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonValue } from "../common/ErrorBody.ts"
import { OpenCors } from "../common/OpenCors.ts"
import { FairUse, Weight } from "../common/Weight.ts"

/** `Cache-Control: public, max-age=…` on every answer of the group. */
export class PublicCache extends HttpApiMiddleware.Tag<PublicCache>()("desk/PublicCache") {}

const Amount = Schema.String.annotations({ description: "Exact decimal in the asset's own unit" })
const Ratio = Schema.NullOr(Schema.Number).annotations({ description: "reserves ÷ supply, 6 decimals; null when nothing circulates" })
const AmountsByAsset = Schema.Record({ key: Schema.String, value: Amount })

export const ReservesReport = Schema.Struct({
  asOf: Schema.String,
  totalReserves: Amount.annotations({ description: "USD: every dollar stablecoin (USDC, USDT, PYUSD, DAI) the vaults and deposit addresses hold" }),
  circulatingSupply: Amount.annotations({ description: "All dollar tokens together (they share the reserves)" }),
  collateralization: Ratio,
  dollarTokens: Schema.Array(Schema.Struct({ asset: Schema.String, propertyId: Schema.NullOr(Schema.Number), circulatingSupply: Amount })),
  wrapped: Schema.Array(Schema.Struct({
    asset: Schema.String, wrapped: Schema.String, propertyId: Schema.NullOr(Schema.Number), reserves: Amount, wrappedSupply: Amount, collateralization: Ratio
  })),
  coldHot: Schema.Struct({ cold: Amount, hot: Amount, deposits: Amount }),
  breakdown: Schema.Struct({
    byChain: Schema.Record({ key: Schema.String, value: AmountsByAsset }),
    byToken: AmountsByAsset,
    byGroup: Schema.Record({ key: Schema.String, value: AmountsByAsset }),
    hotByChain: Schema.Record({ key: Schema.String, value: AmountsByAsset })
  }),
  addressesScanned: Schema.Number
})

export const AttestationPoint = Schema.Struct({
  seq: Schema.Number,
  attestedAt: Schema.String,
  payload: Schema.Record({ key: Schema.String, value: JsonValue }).annotations({ description: "What was hashed: the reserves report plus version, seq, attestedAt, previousPayloadHash" }),
  payload_hash: Schema.String.annotations({ description: "hex sha256 of the canonical payload (keys sorted, numbers to 6 decimals, non-finite → null)" }),
  previousPayloadHash: Schema.NullOr(Schema.String),
  signature: Schema.String.annotations({ description: "hex HMAC-SHA256 of payload_hash with the issuer's secret" }),
  ed25519Signature: Schema.String.annotations({ description: "hex Ed25519 signature of payload_hash; public key in /api/public/status" })
})

export const ReservesBody = Schema.Struct({
  source: Schema.Literal("attestation", "live-scan"),
  attestation: Schema.NullOr(Schema.Struct({
    seq: Schema.Number, attestedAt: Schema.String, payload_hash: Schema.String, previousPayloadHash: Schema.NullOr(Schema.String),
    signature: Schema.String, ed25519Signature: Schema.String
  })),
  reserves: ReservesReport
})
export type ReservesBody = typeof ReservesBody.Type

export const HistoryRange = Schema.Literal("24h", "7d", "30d", "90d", "all")
export const HistoryParams = Schema.Struct({
  range: Schema.optional(HistoryRange).annotations({ description: "Default 24h; all: every row" })
})
export const HistoryBody = Schema.Struct({ range: HistoryRange, points: Schema.Array(AttestationPoint) })

export const SupplyRecord = Schema.Struct({
  symbol: Schema.String,
  chain: Schema.String,
  propertyId: Schema.NullOr(Schema.Number),
  circulatingSupply: Amount,
  backingAssets: Schema.Array(Schema.String),
  reserves: Amount,
  collateralization: Ratio
})
export const SupplyBody = Schema.Struct({ asOf: Schema.String, tokens: Schema.Array(SupplyRecord) })

export const Heartbeat = Schema.Struct({ job: Schema.String, at: Schema.NullOr(Schema.String), ok: Schema.Boolean, detail: Schema.String })

export const DeskStatus = Schema.Struct({
  service: Schema.Literal("token-desk"),
  status: Schema.Literal("ok", "degraded").annotations({ description: "degraded: a peg below 1, a job's last heartbeat failed, or the last attestation is more than two cadences old" }),
  serverTime: Schema.Number.annotations({ description: "Unix milliseconds" }),
  pegHealth: Schema.Array(Schema.Struct({ asset: Schema.String, collateralization: Ratio, healthy: Schema.Boolean })),
  fees: Schema.Array(Schema.Struct({
    asset: Schema.String, kind: Schema.String, live: Schema.Boolean, minAmount: Amount, maxAmount: Amount,
    feeInBps: Schema.Number.annotations({ description: "mint (dollar) or wrap (wrapped) fee, basis points" }),
    feeOutBps: Schema.Number.annotations({ description: "redeem (dollar) or unwrap (wrapped) fee, basis points" })
  })),
  instantRedemptionCapacity: Schema.Record({ key: Schema.String, value: AmountsByAsset }).annotations({ description: "What the hot vaults hold, per chain" }),
  redemptionQueueDepth: Schema.Number.annotations({ description: "Cash-outs, redeems and unwraps whose deposit is in and whose payout is not done" }),
  heartbeats: Schema.Array(Heartbeat),
  attestationCadence: Schema.String.annotations({ description: "\"hourly\" (the spec's), or the shorter interval a test or demo node runs" }),
  attestationIntervalMs: Schema.Number,
  lastAttestationAt: Schema.NullOr(Schema.String),
  attestationPublicKey: Schema.String.annotations({ description: "Ed25519 public key (raw, hex) of every attestation's ed25519Signature" }),
  live: Schema.Record({ key: Schema.String, value: Schema.Boolean }).annotations({
    description: "Each part of the spec and whether this node serves it now, from its registry, chains and settings"
  }),
  notYetLive: Schema.Array(Schema.String).annotations({ description: "The parts `live` says are off (e.g. a webhook whose partner secret is unset)" })
})
export type DeskStatus = typeof DeskStatus.Type

export const StableAsset = Schema.Struct({
  asset: Schema.String,
  name: Schema.String,
  propertyId: Schema.NullOr(Schema.Number),
  network: Schema.String,
  acceptedDeposits: Schema.Array(Schema.String),
  depositChains: Schema.Array(Schema.String),
  minAmount: Amount,
  maxAmount: Amount,
  mintFeeBps: Schema.Number,
  redeemFeeBps: Schema.Number,
  circulatingSupply: Amount,
  live: Schema.Boolean
})
export const WrapAsset = Schema.Struct({
  asset: Schema.String,
  wrapped: Schema.String,
  network: Schema.String,
  propertyId: Schema.NullOr(Schema.Number),
  requiredConfirmations: Schema.Number,
  minAmount: Amount,
  maxAmount: Amount,
  wrapFeeBps: Schema.Number,
  unwrapFeeBps: Schema.Number,
  live: Schema.Boolean,
  wrappable: Schema.Boolean.annotations({ description: "Whether the desk takes wrap orders for this coin now (live, and its deposits are watched: not yet for ETH)" }),
  reserves: Amount,
  wrappedSupply: Amount,
  collateralization: Ratio
})

export const StablesBody = Schema.Struct({ assets: Schema.Array(StableAsset) })
export const WrapBody = Schema.Struct({ assets: Schema.Array(WrapAsset) })

export const TransparencyGroup = HttpApiGroup.make("transparency")
  .add(HttpApiEndpoint.get("reserves", "/api/public/reserves").addSuccess(ReservesBody)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Current reserves: the latest attestation, or a live scan before the first (no key, any origin)"))
  .add(HttpApiEndpoint.get("reservesHistory", "/api/public/reserves/history").setUrlParams(HistoryParams).addSuccess(HistoryBody)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Attestation history points, oldest first (range 24h, 7d, 30d, 90d, all; default 24h)"))
  .add(HttpApiEndpoint.get("supply", "/api/public/supply").addSuccess(SupplyBody)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Supply record of every desk token"))
  .add(HttpApiEndpoint.get("status", "/api/public/status").addSuccess(DeskStatus)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "System status: peg health, fees and limits, capacity, queue, heartbeats, attestation cadence"))
  .middleware(OpenCors)
  .middleware(PublicCache)
  .annotate(OpenApi.Title, "Transparency")
  // "No rate-limit tier" (spec): cached, keyless; a generous per-IP fair-use ceiling of their own.
  .annotate(FairUse, true)

export const RegistryGroup = HttpApiGroup.make("registry")
  .add(HttpApiEndpoint.get("stables", "/api/public/v1/stables/assets").addSuccess(StablesBody)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Dollar token registry (no key): disable submit when a token is not live"))
  .add(HttpApiEndpoint.get("wrap", "/api/public/v1/wrap/assets").addSuccess(WrapBody)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Wrappable assets with live reserves, wrapped supply and collateralization (no key)"))
  .middleware(OpenCors)
  .middleware(PublicCache)
  .annotate(OpenApi.Title, "Registries")
  .annotate(FairUse, true)
