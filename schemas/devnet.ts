// Messages of the Devnet entity (one per chain: ledger, ethereum, base, bsc), what the
// `devnet pay | mine | balance` CLI sends to the running node that holds the in-process devnets.
// Persisted: the CLI is a storage-only client, and a payment is answered only after its txid is
// recorded; redelivering the same request id answers that txid instead of paying again.
import { ClusterSchema, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { PrimaryKey, Schema } from "effect"

/** Chains the devnet commands serve: the token ledger, the EVM chains, the wrap desk's BTC and LTC. */
export const DevnetChainName = Schema.Literal("ledger", "ethereum", "base", "bsc", "btc", "ltc")
export type DevnetChainName = typeof DevnetChainName.Type

/** A one-line reason for the operator: unknown asset, bad amount or address, a real node, no funds. */
export class DevnetRefused extends Schema.TaggedError<DevnetRefused>()("DevnetRefused", {
  message: Schema.String
}) {}

/** An amount as a decimal string in the asset's own unit ("1.5" USDC), never base units. */
export const Amount = Schema.String.pipe(Schema.maxLength(120))

export class Pay extends Schema.Class<Pay>("Devnet/Pay")({
  requestId: Schema.String,
  to: Schema.String.pipe(Schema.maxLength(120)),
  amount: Amount,
  /** Absent: the chain's native coin. */
  asset: Schema.optional(Schema.String.pipe(Schema.maxLength(80)))
}) {
  [PrimaryKey.symbol]() {
    return `pay:${this.requestId}`
  }
}

export const Paid = Schema.Struct({ txid: Schema.String })
export type Paid = typeof Paid.Type

/** Blocks one `devnet mine` may ask for (the ledger port's own limit is 2000). */
export const mineBlocksMax = 1_000

export class Mine extends Schema.Class<Mine>("Devnet/Mine")({
  requestId: Schema.String,
  blocks: Schema.Int.pipe(Schema.between(1, mineBlocksMax))
}) {
  [PrimaryKey.symbol]() {
    return `mine:${this.requestId}`
  }
}

export const Mined = Schema.Struct({ chain: DevnetChainName, height: Schema.Number })
export type Mined = typeof Mined.Type

export class Balance extends Schema.Class<Balance>("Devnet/Balance")({
  requestId: Schema.String,
  address: Schema.String.pipe(Schema.maxLength(120)),
  asset: Schema.optional(Schema.String.pipe(Schema.maxLength(80)))
}) {
  [PrimaryKey.symbol]() {
    return `balance:${this.requestId}`
  }
}

export const BalanceOf = Schema.Struct({ balance: Amount })
export type BalanceOf = typeof BalanceOf.Type

/** A market asset code (exchange_assets.code). */
export const AssetCode = Schema.String.pipe(Schema.pattern(/^[A-Z0-9]{2,12}$/))

/**
 * Issues market asset `code` as a new Omni managed property on the ledger devnet (8 decimals,
 * by the asset issuer, its supply granted to the faucet), for `markets add`. A code already in
 * `exchange_assets` answers its property (issued: false) and issues nothing.
 */
export class IssueAsset extends Schema.Class<IssueAsset>("Devnet/IssueAsset")({
  requestId: Schema.String,
  code: AssetCode
}) {
  [PrimaryKey.symbol]() {
    return `issue:${this.requestId}`
  }
}

export const Issued = Schema.Struct({ code: AssetCode, propertyId: Schema.Number, issued: Schema.Boolean })
export type Issued = typeof Issued.Type

/**
 * Pays `to` from the demo wallet the system made for `userId` (`demo trader`), so that `to`
 * holds up to `upTo` of `asset` as far as the wallet has it, then mines a block: how a demo
 * trader's delegated address is funded. Redelivered, it answers its recorded txid.
 */
export class FundDemo extends Schema.Class<FundDemo>("Devnet/FundDemo")({
  requestId: Schema.String,
  userId: Schema.Number,
  to: Schema.String.pipe(Schema.maxLength(120)),
  asset: AssetCode,
  upTo: Amount
}) {
  [PrimaryKey.symbol]() {
    return `fund-demo:${this.requestId}`
  }
}

/** The send's txid (null when `to` already held enough or the wallet had nothing) and what `to` holds after. */
export const FundedDemo = Schema.Struct({ txid: Schema.NullOr(Schema.String), balance: Amount })
export type FundedDemo = typeof FundedDemo.Type

export const Devnet = Entity.make("Devnet", [
  Rpc.make("Pay", { payload: Pay, success: Paid, error: DevnetRefused }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Mine", { payload: Mine, success: Mined, error: DevnetRefused }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Balance", { payload: Balance, success: BalanceOf, error: DevnetRefused }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("IssueAsset", { payload: IssueAsset, success: Issued, error: DevnetRefused }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("FundDemo", { payload: FundDemo, success: FundedDemo, error: DevnetRefused }).annotate(ClusterSchema.Persisted, true)
])
