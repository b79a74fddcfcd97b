// Account continuity (spec tags CHV1G, CHV1N): a recovery countdown that, unless cancelled,
// completes as succession to a new identity address. One Continuity entity per account (entity
// id: the account's identity address); the countdown is its own durable timer.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"

export const ContinuityState = Schema.Literal("counting", "completed", "cancelled")

export class ContinuityRefused extends Schema.TaggedError<ContinuityRefused>()("ContinuityRefused", {
  code: Schema.String,
  message: Schema.String
}) {}

export const ContinuityView = Schema.Struct({
  account: Schema.String,
  newAddress: Schema.String,
  manifestCid: Schema.String,
  state: ContinuityState,
  completesAt: Schema.String.annotations({ description: "ISO 8601: when the countdown ends" }),
  startedTxid: Schema.NullOr(Schema.String).annotations({ description: "The CHV1G stamp" }),
  completedTxid: Schema.NullOr(Schema.String).annotations({ description: "The CHV1N stamp" })
})
export type ContinuityView = typeof ContinuityView.Type

export class StartCountdown extends Schema.Class<StartCountdown>("Continuity/Start")({
  account: Schema.String,
  newAddress: Schema.String,
  requestId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `start:${this.account}:${this.requestId}`
  }
}

export class CancelCountdown extends Schema.Class<CancelCountdown>("Continuity/Cancel")({
  account: Schema.String,
  requestId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `cancel:${this.account}:${this.requestId}`
  }
}

/** The countdown's end; `startedAtMs` names the countdown it belongs to (a later one has its own). */
export class CompleteCountdown extends Schema.Class<CompleteCountdown>("Continuity/Complete")({
  account: Schema.String,
  startedAtMs: Schema.Number,
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `complete:${this.account}:${this.startedAtMs}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

export const Continuity = Entity.make("Continuity", [
  Rpc.make("Start", { payload: StartCountdown, success: ContinuityView, error: ContinuityRefused }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Cancel", { payload: CancelCountdown, success: ContinuityView, error: ContinuityRefused }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Complete", { payload: CompleteCountdown }).annotate(ClusterSchema.Persisted, true)
])
