// A partner webhook's secret is checked on its headers, at the edge, before a byte of its body is
// read: a 20 MB body to webhooks/partner-a was read and parsed before the secret was looked at.
// The handler then only sees requests that carried the partner's secret.
import type { IncomingMessage } from "node:http"
import type { Option, Redacted } from "effect"
import { errorBody } from "../../../schemas/common/ErrorBody.ts"
import { type Partner, partners } from "../../../schemas/desk/webhooks.ts"
import { prefix } from "../../../schemas/desk/key.ts"
import { headerOrBearer } from "../../platform/http/bearer.ts"
import type { ServiceEdge } from "../../platform/http/ServiceEdge.ts"
import { checkSecret } from "./partnerWebhook.ts"

export type WebhookSecrets = Readonly<Record<Partner, Option.Option<Redacted.Redacted>>>

const routes = new Map<string, Partner>(partners.map((p) => [`${prefix}/webhooks/${p}`, p]))

export const webhookGate = (secrets: WebhookSecrets): NonNullable<ServiceEdge["bodyGate"]> => (route: string, request: IncomingMessage) => {
  const partner = routes.get(route)
  if (partner === undefined) return undefined
  switch (checkSecret(secrets[partner], headerOrBearer(request, "x-api-key"))) {
    case "unset":
      return { reply: { status: 503, body: errorBody("unavailable", `The ${partner} webhook is not configured on this desk.`) } }
    case "wrong":
      return {
        reply: { status: 401, body: errorBody("invalid_webhook_secret", `Missing or wrong ${partner} webhook secret (Authorization: Bearer <secret> or x-api-key).`) },
        headers: { "www-authenticate": "Bearer" }
      }
    case "ok":
      return undefined
  }
}
