// The exchange as the shared HTTP edge sees it: Binance's {code, msg} error bodies, the /api/v3
// alias, the used-weight headers, the weights of routes outside the HttpApi, and the hot public
// reads answered before Effect (same pure functions and schemas as their handlers).
import { Schema } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { type ApiErrorCode, messages, statusOf } from "../../../schemas/exchange/errors.ts"
import { Empty, ExchangeInfo, IndexDocument, prefix, ServerTime } from "../../../schemas/exchange/public.ts"
import { replyResponse } from "../../platform/http/Listener.ts"
import { docsRoutes, makeRouteTable, routesOf } from "../../platform/http/RouteTable.ts"
import type { ErrorReplies, FastRender, Reply, ServiceEdge, SignedLane, StreamRoute } from "../../platform/http/ServiceEdge.ts"
import type { Usage } from "../../platform/RateLimiter.ts"
import type { Market } from "../markets/marketSpec.ts"
import { exchangeInfo, indexDocument, ping, serverTime } from "./publicBodies.ts"

export interface ExchangeLimits {
  readonly keyWeightPerMin: number
  readonly ipWeightPerMin: number
}

/** The listed markets, as the node's registry holds them now. */
export type MarketsNow = () => ReadonlyArray<Market>

const reply = (code: ApiErrorCode, msg: string, status = statusOf(code)): Reply => ({ status, body: JSON.stringify({ code, msg }) })

export const exchangeErrors: ErrorReplies = {
  notFound: reply(-1020, messages.unsupported),
  malformed: reply(-1102, messages.malformed),
  multipartRefused: reply(-1102, "Multipart bodies are not accepted: send parameters in the query or as application/x-www-form-urlencoded (JSON for the web app's routes).", 400),
  headersTooLarge: reply(-1102, "Request line or headers too large.", 431),
  bodyTooLarge: reply(-1104, "Request body is too large.", 413),
  timeout: reply(-1007, "Timeout waiting for the request.", 408),
  methodNotAllowed: reply(-1020, messages.unsupported, 405),
  internal: reply(-1001, "Internal error; unable to process your request. Please try again."),
  stopping: reply(-1001, "This node is stopping; send the request again (to another node).", 503),
  refusedText: (reason) => reply(-1100, `Illegal characters found in a parameter: ${reason}`, 400),
  upgradeRefused: reply(-1020, "Protocol upgrades (WebSocket) are not supported; send plain HTTP requests.", 400),
  expectationFailed: reply(-1020, "Only the 100-continue expectation is supported.", 417),
  tooManyConnections: (limit) => reply(-1003, `Too many open connections from this IP; the limit is ${limit}.`, 429),
  rateLimited: (limit) => reply(-1003, messages.rateLimit(limit))
}

/** /ops, /ops/stream and /metrics without the right SHARDLINE_OPS_TOKEN: 401 -2015 with a Bearer challenge. */
export const exchangeOpsRefusedReply = (reason: "missing" | "wrong") => ({
  ...reply(-2015, reason === "missing" ? "Ops endpoints need Authorization: Bearer <SHARDLINE_OPS_TOKEN>." : "Invalid ops token."),
  headers: { "www-authenticate": "Bearer" }
})

export const exchangeOpsRefused = (reason: "missing" | "wrong") => {
  const r = exchangeOpsRefusedReply(reason)
  return replyResponse(r, r.headers)
}

const v3 = "/api/v3"

/** Binance clients hard-code /api/v3: the same routes are served there. */
export const rewriteV3 = (url: string): string =>
  url.startsWith(v3) && (url.length === v3.length || url[v3.length] === "/" || url[v3.length] === "?")
    ? prefix + url.slice(v3.length)
    : url

export const exchangeUsageHeaders = (usage: Usage): Record<string, string> => {
  const used = String(usage.used)
  return { "x-svc-used-weight-1m": used, "x-mbx-used-weight-1m": used }
}

/** Routes outside the HttpApi: documents and ops, limited like any other (the docs page is 1.9 MB). */
export const exchangeExtraRoutes = [
  ...docsRoutes,
  { method: "GET", path: `${prefix}/openapi.json`, weight: 5 },
  { method: "GET", path: "/ops", weight: 20 },
  { method: "GET", path: "/ops/stream", weight: 20 },
  { method: "GET", path: "/ops/app.js", weight: 1 },
  { method: "GET", path: "/ops/app.css", weight: 1 },
  { method: "GET", path: "/metrics", weight: 5 }
] as const

const json = <A, I>(schema: Schema.Schema<A, I>, body: () => A): FastRender => {
  const encode = Schema.encodeSync(schema)
  return () => JSON.stringify(encode(body()))
}

/** What the exchange's edge serves beside the registry: market data from memory and the stream. */
export interface MarketDataEdge {
  readonly fast: ReadonlyArray<readonly [string, FastRender]>
  readonly stream: StreamRoute
  /** Ends every open stream (the listener is closing). */
  readonly closeStreams: () => void
}

/** The live ops page's stream (platform/ops/OpsFeed.ts). */
export interface OpsStreamEdge {
  readonly stream: StreamRoute
  readonly closeStreams: () => void
}

export const exchangeEdge = (limits: ExchangeLimits, markets: MarketsNow, marketData?: MarketDataEdge, signedLane?: SignedLane, ops?: OpsStreamEdge): ServiceEdge => ({
  service: "exchange",
  errors: exchangeErrors,
  rewrite: rewriteV3,
  usageHeaders: exchangeUsageHeaders,
  ipWeightPerMin: limits.ipWeightPerMin,
  bodyBytesMax: 16 * 1024,
  // No exchange route takes multipart; @effect/platform's multipart parser fails (503) or waits
  // forever on a truncated or empty one (the fuzz run found it on the sign-in callback).
  refusesMultipart: true,
  routes: makeRouteTable([...routesOf(ExchangeApi), ...exchangeExtraRoutes]),
  fast: new Map<string, FastRender>([
    [prefix, json(IndexDocument, () => indexDocument)],
    [`${prefix}/ping`, json(Empty, ping)],
    [`${prefix}/time`, json(ServerTime, serverTime)],
    [`${prefix}/exchangeInfo`, json(ExchangeInfo, () => exchangeInfo(limits, markets()))],
    ...(marketData?.fast ?? [])
  ]),
  streams: new Map([
    ...(marketData === undefined ? [] : [[`${prefix}/stream`, marketData.stream] as const]),
    ...(ops === undefined ? [] : [["/ops/stream", ops.stream] as const])
  ]),
  onClose: () => {
    marketData?.closeStreams()
    ops?.closeStreams()
  },
  ...(signedLane === undefined ? {} : { signedLane }),
  cached: new Set([...docsRoutes.map((r) => r.path), `${prefix}/openapi.json`])
})
