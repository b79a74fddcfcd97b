// The calling key's outbound callbacks (beyond the spec, which makes delivery best effort and
// unretried): every attempt with its event id and outcome, and a test event on demand (as Stripe's
// "send test webhook"), so a partner can check its receiver and its signature check.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"
import { prefix } from "./key.ts"
import { DeskKey } from "./security.ts"

export const CallbackDelivery = Schema.Struct({
  eventId: Schema.String.annotations({ description: "Also the body's eventId" }),
  orderId: Schema.NullOr(Schema.String),
  type: Schema.String.annotations({ description: "The event type (x-svc-event)" }),
  url: Schema.String,
  outcome: Schema.Literal("delivered", "rejected", "failed", "refused_target").annotations({
    description: "delivered: 2xx; rejected: another status; failed: no answer within 5 s or no connection; refused_target: not https, or not a public address"
  }),
  httpStatus: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.Int,
  attemptedAt: Schema.String.annotations({ description: "ISO 8601" })
})
export type CallbackDelivery = typeof CallbackDelivery.Type

export const CallbackLog = Schema.Struct({ deliveries: Schema.Array(CallbackDelivery) })

export const CallbackTest = Schema.Struct({
  sent: Schema.Boolean.annotations({ description: "false: this key has no callback URL" }),
  delivery: Schema.optional(CallbackDelivery)
})

export const CallbacksGroup = HttpApiGroup.make("callbacks")
  .add(HttpApiEndpoint.get("deliveries", `${prefix}/callbacks`).addSuccess(CallbackLog)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "The calling key's last 100 callback deliveries, newest first (any scope)"))
  .add(HttpApiEndpoint.post("test", `${prefix}/callbacks/test`).addSuccess(CallbackTest)
    .annotate(Weight, 10)
    .annotate(OpenApi.Summary, "Sends a signed `ping` event to the key's callback URL now and answers its outcome (any scope)"))
  .middleware(DeskKey)
  .annotate(OpenApi.Title, "Callbacks")
