// The Attestor entity (one, id "desk"): scans the reserves and appends a signed attestation at
// the top of every UTC hour with its own durable timer (Tick, a DeliverAt message in cluster
// storage), and on demand (`desk attest`: an Attest names its request and its row carries that
// id, so a redelivered Attest answers the row it wrote: exactly once, like a tick). Its schedule
// is a row (desk_attestor: the tick it expects next and when): a tick older than the row's is a
// stale duplicate and does nothing.
// Every node sends a Kick at start; the Attestor schedules a tick only when none is pending (or
// the pending one is more than 10 minutes overdue, i.e. its message was lost), attesting at once
// when the last attestation is older than the cadence. The cadence is hourly
// (SHARDLINE_ATTESTATION_INTERVAL_MS shortens it for tests and demos). Each attestation leaves a
// heartbeat.
import { randomUUID } from "node:crypto"
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Schedule } from "effect"
import { Attestor, attestorId, AttestFailed, Kick, Tick } from "../../../schemas/desk/attestor.ts"
import { DeskConfig } from "../DeskConfig.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { type AttestationPoint, HOUR_MS, type Payload } from "./attestation.ts"
import { Attestations } from "./Attestations.ts"
import { beat } from "../heartbeats.ts"
import { ReserveScanner } from "../reserves/ReserveScanner.ts"

const metrics = entityMetrics("Attestor")

/** The next whole multiple of `intervalMs` after `ms` (the next top of the hour by default). */
export const nextSlot = (ms: number, intervalMs = HOUR_MS): number => (Math.floor(ms / intervalMs) + 1) * intervalMs

/** How late a pending tick may be before a start's Kick takes it for lost and schedules another. */
export const tickLostAfterMs = 10 * 60_000

export const layer = Attestor.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const attestations = yield* Attestations
  const scanner = yield* ReserveScanner
  const self = (yield* Attestor.client)(address.entityId)
  const intervalMs = (yield* DeskConfig).attestationIntervalMs
  yield* metrics.activated

  const rowOf = (point: AttestationPoint) => {
    const { payload: _payload, ...row } = point
    return row
  }

  /** Scans and appends; an on-demand request (`requestId`) appends at most once, however often it is delivered. */
  const attest = (requestId?: string) => Effect.gen(function*() {
    const done = requestId === undefined ? undefined : yield* attestations.byRequest(requestId)
    if (done !== undefined) return rowOf(done)
    const { report, ms } = yield* scanner.scan
    const point = yield* attestations.append(report as unknown as Payload, requestId)
    yield* beat("attestor", `attestation ${point.seq} (scan ${ms} ms)`).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    yield* Effect.logInfo(`attestation ${point.seq}: ${point.payload_hash}`)
    return rowOf(point)
  })

  /** Sends tick `n` due at `dueAtMs`, then records it as the one expected. */
  const schedule = (n: number, dueAtMs: number) =>
    Effect.gen(function*() {
      // Sent before it is recorded: a crash in between leaves a tick newer than the row, which still runs.
      yield* self.Tick(new Tick({ n, dueAtMs }), { discard: true })
      yield* sql`INSERT INTO desk_attestor (id, tick_n, due_at_ms) VALUES (1, ${n}, ${dueAtMs})
        ON CONFLICT (id) DO UPDATE SET tick_n = GREATEST(desk_attestor.tick_n, EXCLUDED.tick_n), due_at_ms = EXCLUDED.due_at_ms, updated_at = now()`
    })

  const state = Effect.map(
    sql<{ tick_n: string; due_at_ms: string }>`SELECT tick_n::text AS tick_n, due_at_ms::text AS due_at_ms FROM desk_attestor WHERE id = 1`,
    (rows) => rows[0] === undefined ? undefined : { n: Number(rows[0].tick_n), dueAtMs: Number(rows[0].due_at_ms) }
  )

  return Attestor.of({
    // A persisted Attest redelivered after a crash (its row written, its reply not saved) is
    // answered with the row its request id names: no second attestation.
    Attest: ({ payload }) =>
      attest(payload.requestId).pipe(
        Effect.catchAllCause((cause) => Effect.fail(new AttestFailed({ message: `the attestation was not written: ${String(cause).split("\n")[0]}` }))),
        metrics.guard
      ),
    Tick: ({ payload }) =>
      Effect.gen(function*() {
        yield* metrics.timerFired(payload.dueAtMs)
        const now = yield* state
        if (now !== undefined && payload.n < now.n) return
        // A tick redelivered after a crash between its attestation and its schedule write finds
        // an attestation made at or after its due time: that one answers this tick, so it only
        // schedules the next (the series gets no extra row).
        const latest = yield* attestations.latest
        if (latest === undefined || Date.parse(latest.attestedAt) < payload.dueAtMs) yield* attest().pipe(Effect.catchAllCause((cause) => Effect.logError("attestor: this hour's attestation failed; the next tick tries again", cause)))
        yield* schedule(payload.n + 1, nextSlot(Date.now(), intervalMs))
      }).pipe(Effect.orDie, metrics.guard),
    Kick: () =>
      Effect.gen(function*() {
        const now = yield* state
        // A pending tick is delivered by whichever runner owns the entity, late or not; only one
        // far past its time is taken for lost.
        if (now !== undefined && now.dueAtMs > Date.now() - tickLostAfterMs) return
        const latest = yield* attestations.latest
        const stale = latest === undefined || Date.parse(latest.attestedAt) < Date.now() - intervalMs
        yield* schedule((now?.n ?? 0) + 1, stale ? Date.now() : nextSlot(Date.now(), intervalMs))
      }).pipe(Effect.orDie, metrics.guard)
  })
}), { maxIdleTime: "5 minutes", concurrency: 1 })

/** Every node's start: one Kick to the Attestor (in the background; retried until the cluster takes it). */
export const layerKick = Layer.scopedDiscard(Effect.forkScoped(
  Effect.flatMap(Attestor.client, (client) => client(attestorId).Kick(new Kick({ bootId: randomUUID() }), { discard: true })).pipe(
    Effect.retry(Schedule.spaced("1 second").pipe(Schedule.compose(Schedule.recurs(60)))),
    Effect.catchAllCause((cause) => Effect.logWarning("attestor: the start kick was not delivered", cause))
  )
))
