// Messages of the Attestor, the desk's one attestation writer: a single entity (id "desk") with
// its own durable hourly timer. Persisted: a Tick waits in cluster storage for its time and is
// delivered to whichever runner owns the entity then, so the cadence survives a failover.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"

/** The Attestor's only entity id. */
export const attestorId = "desk"

/**
 * An attestation now (`desk attest`); answers the new row. The row carries `requestId`, so the
 * same request delivered again (after a crash) answers that row and appends nothing.
 */
export class Attest extends Schema.Class<Attest>("Attestor/Attest")({
  requestId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
}) {
  [PrimaryKey.symbol]() {
    return `attest:${this.requestId}`
  }
}

/**
 * The hourly timer: attest, then schedule tick n + 1. A tick older than the schedule's is stale.
 * Its key carries the due time too: a tick sent again for another time (an operator's nudge, a
 * test) is a new message, and whichever of the two runs second is stale.
 */
export class Tick extends Schema.Class<Tick>("Attestor/Tick")({
  n: Schema.Number,
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `tick:${this.n}:${this.dueAtMs}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

/** Sent by every node at start: schedules a tick if none is pending (first start, or a lost one). */
export class Kick extends Schema.Class<Kick>("Attestor/Kick")({
  bootId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `kick:${this.bootId}`
  }
}

export const AttestedRow = Schema.Struct({
  seq: Schema.Number,
  attestedAt: Schema.String,
  payload_hash: Schema.String,
  previousPayloadHash: Schema.NullOr(Schema.String),
  signature: Schema.String,
  ed25519Signature: Schema.String
})
export type AttestedRow = typeof AttestedRow.Type

export class AttestFailed extends Schema.TaggedError<AttestFailed>()("AttestFailed", { message: Schema.String }) {}

export const Attestor = Entity.make("Attestor", [
  Rpc.make("Attest", { payload: Attest, success: AttestedRow, error: AttestFailed }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Tick", { payload: Tick }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Kick", { payload: Kick }).annotate(ClusterSchema.Persisted, true)
])
