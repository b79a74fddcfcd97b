// Messages of the Authorization entity (one per user + asset). Persisted: a grant is
// acknowledged only after it is committed; the expiry is a durable self-sent DeliverAt timer.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"

export class GrantRefused extends Schema.TaggedError<GrantRefused>()("GrantRefused", {
  message: Schema.String
}) {}

export class Grant extends Schema.Class<Grant>("Authorization/Grant")({
  grantId: Schema.String,
  cap: Schema.String,
  expiresAtMs: Schema.Number
}) {
  /** Redelivery of the same grant returns the stored reply instead of running again. */
  [PrimaryKey.symbol]() {
    return `grant:${this.grantId}`
  }
}

export const Granted = Schema.Struct({
  grantId: Schema.String,
  asset: Schema.String,
  cap: Schema.String,
  expiresAt: Schema.Number,
  delegatedAddress: Schema.String
})
export type Granted = typeof Granted.Type

export class Expire extends Schema.Class<Expire>("Authorization/Expire")({
  grantId: Schema.String,
  dueAtMs: Schema.Number
}) {
  // One timer per grant: the key is unique per schedule, so dedup never swallows a later one.
  [PrimaryKey.symbol]() {
    return `expire:${this.grantId}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

export const Authorization = Entity.make("Authorization", [
  Rpc.make("Grant", { payload: Grant, success: Granted, error: GrantRefused })
    .annotate(ClusterSchema.Persisted, true),
  Rpc.make("Expire", { payload: Expire })
    .annotate(ClusterSchema.Persisted, true)
    .annotate(ClusterSchema.Uninterruptible, true)
])
