// POST /api/public/v1/webhooks/partner-a|partner-b: with the partner's secret (checked at the edge,
// webhookGate.ts), records the event once (deduplicated by partner and body) against the order it
// names, and pages operations (a warning log line, a metric, and the /ops `partnerWebhooks` list).
// The order's DeskOrder entity appends the event to its log (PartnerEvent; an event naming no order
// goes to the `noOrder` entity): this handler only reads which order is meant. Nothing here moves funds.
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Metric } from "effect"
import { DeskApi } from "../../../schemas/desk/api.ts"
import { BadRequest, type ServiceUnavailable, unavailable } from "../../../schemas/desk/errors.ts"
import { DeskOrderEntity, noOrder, PartnerEvent } from "../../../schemas/desk/orders.ts"
import type { Partner, WebhookAck, WebhookBody } from "../../../schemas/desk/webhooks.ts"
import type { CanonicalValue } from "../../crypto/canonicalJson.ts"
import { deskWebhookEvents } from "../../platform/Metrics.ts"
import { dedupeKey, parseOrderRef } from "./partnerWebhook.ts"

const orderRefHint = "order_id must be a short reference (TX- and 8 letters or digits) or the order's uuid"

export const WebhookHandlers = HttpApiBuilder.group(DeskApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orders = yield* DeskOrderEntity.client

    const receive = (partner: Partner, body: WebhookBody) =>
      Effect.gen(function*() {
        // The partner's secret was checked at the edge, before the body was read (webhookGate.ts).
        const ref = body.order_id === undefined ? undefined : parseOrderRef(body.order_id)
        if (body.order_id !== undefined && ref === undefined) {
          return yield* Effect.fail(new BadRequest({ error: { code: "invalid_parameter", message: orderRefHint } }))
        }
        const [order] = ref === undefined
          ? []
          : yield* sql<{ id: string; short_ref: string }>`SELECT id, short_ref FROM desk_orders
              WHERE ${ref._tag === "ShortRef" ? sql`short_ref = ${ref.ref}` : sql`id = ${ref.id}`}`
        const { eventId } = yield* orders(order?.id ?? noOrder).PartnerEvent(new PartnerEvent({
          partner, event: body.event, body: JSON.stringify(body), dedupeKey: dedupeKey(partner, body as CanonicalValue)
        }))
        const recorded = eventId !== null
        if (recorded) {
          // Paging operations: the log line and the metric are what alerting watches.
          yield* Effect.logWarning(`partner webhook: ${partner} sent "${body.event}"`).pipe(
            Effect.annotateLogs({ partner, event: body.event, order: order?.short_ref ?? body.order_id ?? null, eventId })
          )
          yield* Metric.increment(Metric.tagged(deskWebhookEvents, "partner", partner))
        }
        const ack: WebhookAck = order === undefined ? { ok: true, recorded } : { ok: true, recorded, order: order.short_ref }
        return ack
      }).pipe(Effect.catchAll((e): Effect.Effect<never, BadRequest | ServiceUnavailable> =>
        e instanceof BadRequest ? Effect.fail(e) : Effect.zipRight(
          Effect.logError("partner webhook not recorded", e),
          Effect.fail(unavailable("The event could not be recorded; send it again."))
        )))

    return handlers
      .handle("partner-a", ({ payload }) => receive("partner-a", payload))
      .handle("partner-b", ({ payload }) => receive("partner-b", payload))
  }))
