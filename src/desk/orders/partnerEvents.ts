// A partner's webhook event in an order's event log (desk_order_events), as the DeskOrder entity
// writes it (the only writer of its order's log): once per dedupe key, so a partner's retry or the
// message run again records nothing more.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PartnerEvent, PartnerEventRecorded } from "../../../schemas/desk/orders.ts"

/** Appends the event to `orderId`'s log (null: an event that names no order); its id, or null if already there. */
export const recordPartnerEvent = (orderId: string | null, e: PartnerEvent) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`INSERT INTO desk_order_events (order_id, source, event, body, dedupe_key)
      VALUES (${orderId}, ${e.partner}, ${e.event}, ${e.body}::jsonb, ${e.dedupeKey})
      ON CONFLICT (dedupe_key) DO NOTHING RETURNING id::text`.pipe(
      Effect.map((rows) => new PartnerEventRecorded({ eventId: rows[0]?.id ?? null }))
    ))
