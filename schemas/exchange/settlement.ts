// Messages of the Settlement entity, one per trade (entity id: the trade id as a decimal
// string). It follows the trade's two legs (settlement_legs rows) from signed to a final depth
// with its own durable timers: asks the Authorization entity to sign a leg it finds unsigned,
// re-broadcasts the stored bytes of a leg the ledger lost (dropped, reorged out), and records
// confirmations. Persisted: a trade's Follow survives a crash of the node that sent it.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"

/** Start (or resume) following a trade; the Market sends it after its commit, and again on activation for unfinished trades. */
export class Follow extends Schema.Class<Follow>("Settlement/Follow")({
  tradeId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `follow:${this.tradeId}`
  }
}

/** The entity's own timer: look at the legs again at `dueAtMs`; `n` makes each schedule's key unique. */
export class Check extends Schema.Class<Check>("Settlement/Check")({
  tradeId: Schema.String,
  n: Schema.Number,
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `check:${this.tradeId}:${this.n}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

export const Settlement = Entity.make("Settlement", [
  Rpc.make("Follow", { payload: Follow }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Check", { payload: Check }).annotate(ClusterSchema.Persisted, true)
])
