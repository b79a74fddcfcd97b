// GET /api/public/v1/callbacks and POST /api/public/v1/callbacks/test for the calling key.
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { DeskApi } from "../../../schemas/desk/api.ts"
import type { CallbackDelivery } from "../../../schemas/desk/callbacks.ts"
import { unavailable } from "../../../schemas/desk/errors.ts"
import { DeskMember } from "../../../schemas/desk/security.ts"
import { DeskConfig } from "../DeskConfig.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { sendCallback } from "./CallbackSender.ts"

interface Row {
  readonly event_id: string
  readonly order_id: string | null
  readonly event_type: string
  readonly url: string
  readonly outcome: CallbackDelivery["outcome"]
  readonly http_status: number | null
  readonly error: string | null
  readonly duration_ms: number
  readonly attempted_at: Date
}

const deliveryOf = (r: Row): CallbackDelivery => ({
  eventId: r.event_id,
  orderId: r.order_id,
  type: r.event_type,
  url: r.url,
  outcome: r.outcome,
  httpStatus: r.http_status,
  error: r.error,
  durationMs: r.duration_ms,
  attemptedAt: new Date(r.attempted_at).toISOString()
})

const logUnavailable = () => unavailable("The callback log is unavailable; try again.")

export const CallbackHandlers = HttpApiBuilder.group(DeskApi, "callbacks", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const config = yield* DeskConfig
    const recent = (keyId: string) =>
      sql<Row>`SELECT event_id::text, order_id::text, event_type, url, outcome, http_status, error, duration_ms, attempted_at
        FROM desk_callback_deliveries WHERE key_id = ${keyId} ORDER BY attempted_at DESC, desk_callback_deliveries.event_id LIMIT 100`
    return handlers
      .handle("deliveries", () =>
        Effect.gen(function*() {
          const member = yield* DeskMember
          return { deliveries: (yield* recent(member.keyId)).map(deliveryOf) }
        }).pipe(Effect.mapError(logUnavailable)))
      .handle("test", () =>
        Effect.gen(function*() {
          const member = yield* DeskMember
          const now = new Date().toISOString()
          const sent = yield* sendCallback(member.keyId, null, {
            type: "ping",
            message: "A test event sent on request; no order moved.",
            amount: { exact: "0" },
            chain: "",
            txid: "",
            occurredAt: now,
            order: { id: "", status: "test", payoutAmount: { exact: "0" } }
          }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(SecretBox, box), Effect.provideService(DeskConfig, config))
          if (sent === undefined) return { sent: false }
          const [row] = yield* sql<Row>`SELECT event_id::text, order_id::text, event_type, url, outcome, http_status, error, duration_ms, attempted_at
            FROM desk_callback_deliveries WHERE event_id = ${sent.eventId}`
          return row === undefined ? { sent: true } : { sent: true, delivery: deliveryOf(row) }
        }).pipe(Effect.mapError(logUnavailable)))
  }))
