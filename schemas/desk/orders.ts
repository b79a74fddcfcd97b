// The DeskOrder entity (entity id: the order's uuid), one per desk order. Watch starts it after
// the order is written; Tick is its own durable timer (persisted, delivered at its time, one per
// due time); Advance is what a poll sends so the answer is fresh. Every message runs the same
// idempotent advance over the order's row, so a repeated or replayed message changes nothing.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"

export class WatchOrder extends Schema.Class<WatchOrder>("DeskOrder/Watch")({}) {
  [PrimaryKey.symbol]() {
    return "watch"
  }
}

export class TickOrder extends Schema.Class<TickOrder>("DeskOrder/Tick")({
  /** When this timer fires (Unix ms). */
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `tick:${this.dueAtMs}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

export class AdvanceOrder extends Schema.Class<AdvanceOrder>("DeskOrder/Advance")({}) {}

export const DeskOrderEntity = Entity.make("DeskOrder", [
  Rpc.make("Watch", { payload: WatchOrder }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Tick", { payload: TickOrder }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("Advance", { payload: AdvanceOrder }).annotate(ClusterSchema.Uninterruptible, true)
])
