// The platform's InboundWebhooks port (the ops view's partner webhooks), from the desk's order
// events: the partner webhooks of the last day, the latest ten with their order's short reference.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { InboundWebhooks, noInboundWebhooks } from "../../platform/ops/InboundWebhooks.ts"

export const layer = Layer.effect(InboundWebhooks, Effect.map(SqlClient.SqlClient, (sql) => ({
  recent: sql<{ id: string; source: string; event: string; short_ref: string | null; at: Date; last_day: string }>`
    SELECT e.id::text, e.source, e.event, o.short_ref, e.at, count(*) OVER ()::text AS last_day
    FROM desk_order_events e LEFT JOIN desk_orders o ON o.id = e.order_id
    WHERE e.source LIKE 'partner-%' AND e.at > now() - interval '1 day'
    ORDER BY e.id DESC LIMIT 10`.pipe(
    Effect.map((rows) => ({
      lastDay: Number(rows[0]?.last_day ?? 0),
      latest: rows.map((w) => ({ id: w.id, partner: w.source, event: w.event, order: w.short_ref, at: new Date(w.at).toISOString() }))
    })),
    Effect.orElseSucceed(() => noInboundWebhooks)
  )
})))
