// Inbound partner webhooks (spec: Inbound partner webhooks): a partner pushes a status event; the
// desk records it as an auditable order event and pages operations; nothing moves funds. Each
// partner has its own shared secret (SHARDLINE_WEBHOOK_SECRET_PARTNER_A / _B), sent as
// `Authorization: Bearer <secret>` or `x-api-key`; unset, the endpoint answers 503.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonValue, ServiceUnavailable } from "../common/ErrorBody.ts"
import { Weight } from "../common/Weight.ts"
import { Unauthorized } from "./errors.ts"
import { prefix } from "./key.ts"

export const partners = ["partner-a", "partner-b"] as const
export type Partner = (typeof partners)[number]

const text = (max: number) => Schema.String.pipe(Schema.maxLength(max))

export const WebhookBody = Schema.Struct({
  event: text(100).pipe(Schema.minLength(1)).annotations({ description: "The partner's event name (recorded as sent; names are the partner's own)" }),
  order_id: Schema.optional(text(64)).annotations({ description: "A short TX- reference (TX- and 8 characters) or the order's uuid" }),
  message: Schema.optional(text(2_000)),
  amount: Schema.optional(Schema.Number.pipe(Schema.finite())),
  chain: Schema.optional(text(32)),
  txid: Schema.optional(text(128)),
  data: Schema.optional(JsonValue).annotations({ description: "Anything the partner adds; stored as sent (the spec leaves its structure open)" })
}).annotations({ identifier: "PartnerWebhookEvent" })
export type WebhookBody = typeof WebhookBody.Type

export const WebhookAck = Schema.Struct({
  ok: Schema.Boolean,
  recorded: Schema.Boolean.annotations({ description: "false: the same event (same partner, same body) was recorded before; it is not recorded twice" }),
  order: Schema.optional(Schema.String).annotations({ description: "The order's short reference, when order_id named one of ours" })
}).annotations({ identifier: "PartnerWebhookAck" })
export type WebhookAck = typeof WebhookAck.Type

const endpoint = <P extends Partner>(partner: P) =>
  HttpApiEndpoint.post(partner, `${prefix}/webhooks/${partner}`)
    .setPayload(WebhookBody)
    .addSuccess(WebhookAck)
    .addError(Unauthorized)
    .addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, `Inbound status event from ${partner}: recorded, operations paged, never moves funds`)
    .annotate(OpenApi.Description,
      `Authenticated by ${partner}'s shared secret (Authorization: Bearer <secret> or x-api-key), compared in constant time: 401 invalid_webhook_secret when wrong, ` +
        "503 unavailable when the desk has no secret set for this partner. An event with the same body sent again answers recorded: false.")

export const WebhookGroup = HttpApiGroup.make("webhooks")
  .add(endpoint("partner-a"))
  .add(endpoint("partner-b"))
  .annotate(OpenApi.Title, "Inbound partner webhooks")
