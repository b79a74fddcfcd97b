// The token desk's HTTP service, ready for a listener (http/DeskListener.ts serves it): the API
// with its handlers and auth middleware, its edge, and how a request that does not decode is
// answered (400 invalid_parameter, src/platform/http/errorBodyEdge.ts).
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { DeskApi } from "../../../schemas/desk/api.ts"
import { DeskMember } from "../../../schemas/desk/security.ts"
import { errorShapeEdge } from "../../platform/http/errorBodyEdge.ts"
import * as OpenCors from "../../platform/http/openCors.ts"
import * as DeskKeyAuth from "../auth/DeskKeyAuth.ts"
import { CallbackHandlers } from "../callbacks/CallbackHandlers.ts"
import { CashoutHandlers, OrderPollHandlers, StablesHandlers, WrapHandlers } from "../cashout/CashoutHandlers.ts"
import { WebhookHandlers } from "../webhooks/WebhookHandlers.ts"
import { webhookGate, type WebhookSecrets } from "../webhooks/webhookGate.ts"
import { RewardsHandlers, WalletLinkHandlers } from "./WalletLinkHandlers.ts"
import * as PublicCache from "./publicCache.ts"
import { DeskAppHandlers, DeskSessionHandlers, DeskSignInHandlers } from "./WebAppHandlers.ts"
import * as DeskSessionAuth from "../auth/DeskSessionAuth.ts"
import { fileURLToPath } from "node:url"
import { webAppRoutes } from "../../platform/webapp/WebApp.ts"
import { fastPaths, Transparency, type TransparencyShape } from "./Transparency.ts"

/** Partner bodies (orders, wallet-link envelopes) are a few hundred bytes. */
export const deskBodyBytesMax = 32 * 1024

/** Per client IP per minute: the partner routes' budget, and the transparency and registry reads'
 * fair-use ceiling (no rate-limit tier in the spec; served from the node's cache). */
export interface DeskLimits {
  readonly ipWeightPerMin: number
  readonly publicIpWeightPerMin: number
}

/**
 * The desk's edge. With the node's Transparency service, the cached transparency and registry
 * bodies are answered in node:http before Effect (the fast lane), with the same headers.
 */
export const deskEdge = (limits: DeskLimits, webhookSecrets: WebhookSecrets, transparency?: TransparencyShape) =>
  errorShapeEdge({
    service: "desk", api: DeskApi, ipWeightPerMin: limits.ipWeightPerMin, fairUseIpWeightPerMin: limits.publicIpWeightPerMin,
    bodyBytesMax: deskBodyBytesMax, bodyGate: webhookGate(webhookSecrets),
    ...(transparency === undefined ? {} : {
      fast: new Map(fastPaths.map((path) => [path, () => {
        const body = transparency.fastBody(path)
        return body === undefined ? undefined : { body, headers: { ...OpenCors.corsHeaders, ...PublicCache.publicCacheHeaders } }
      }]))
    })
  })

const TransparencyHandlers = HttpApiBuilder.group(DeskApi, "transparency", (handlers) =>
  Effect.map(Transparency, (t) =>
    handlers
      .handle("reserves", () => t.reserves)
      .handle("reservesHistory", ({ urlParams }) => t.history(urlParams.range ?? "24h"))
      .handle("supply", () => t.supply)
      .handle("status", () => t.status)))

const RegistryHandlers = HttpApiBuilder.group(DeskApi, "registry", (handlers) =>
  Effect.map(Transparency, (t) => handlers.handle("stables", () => t.stables).handle("wrap", () => t.wrap)))

const KeyHandlers = HttpApiBuilder.group(DeskApi, "key", (handlers) =>
  handlers.handle("key", () =>
    Effect.map(DeskMember, (m) => ({ memberId: m.memberId, scopes: m.scopes, feeBps: m.feeBps, callbackUrl: m.callbackUrl }))))

export const deskHandlers = HttpApiBuilder.api(DeskApi).pipe(
  Layer.provide([TransparencyHandlers, RegistryHandlers, KeyHandlers, WalletLinkHandlers, RewardsHandlers, CallbackHandlers, WebhookHandlers, CashoutHandlers, OrderPollHandlers, StablesHandlers, WrapHandlers,
    DeskSignInHandlers, DeskSessionHandlers, DeskAppHandlers]),
  Layer.provide([DeskKeyAuth.layer, DeskSessionAuth.layer, OpenCors.layer, PublicCache.layer])
)

/** The web app at /app/ (src/desk/web/app.js) and /favicon.ico. */
export const deskWebApp = webAppRoutes({ title: "Token desk", entry: fileURLToPath(new URL("../web/app.js", import.meta.url)) })
