// What the desk and social listeners share at the edge: the `{"error": {"code", "message"}}`
// replies (schemas/common/ErrorBody.ts), a decode failure as 400 invalid_parameter, the
// rate-limit headers, and the ServiceEdge of a listener that has nothing service-specific in front.
import type { HttpApi } from "@effect/platform"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { BadRequest, errorBody } from "../../../schemas/common/ErrorBody.ts"
import { notJsonMessage } from "../../../schemas/common/jsonBody.ts"
import { openCorsPaths } from "./openCors.ts"
import { docsRoutes, makeRouteTable, routesOf } from "./RouteTable.ts"
import type { ErrorReplies, FastRender, Reply, ServiceEdge } from "./ServiceEdge.ts"
import type { Usage } from "../RateLimiter.ts"

const reply = (status: number, code: string, message: string): Reply => ({ status, body: errorBody(code, message) })

export const errorShapeReplies: ErrorReplies = {
  notFound: reply(404, "not_found", "No such route."),
  malformed: reply(400, "invalid_request", "Malformed request."),
  multipartRefused: reply(400, "invalid_request", "Multipart bodies are not accepted here: send application/json (uploads take the raw bytes)."),
  headersTooLarge: reply(431, "headers_too_large", "Request line or headers too large."),
  bodyTooLarge: reply(413, "body_too_large", "Request body is too large."),
  timeout: reply(408, "request_timeout", "Timeout waiting for the request."),
  methodNotAllowed: reply(405, "method_not_allowed", "This method is not supported."),
  internal: reply(503, "internal", "Internal error; unable to process the request. Please try again."),
  stopping: reply(503, "unavailable", "This node is stopping; send the request again (to another node)."),
  refusedText: (reason) => reply(400, "invalid_request", reason),
  upgradeRefused: reply(400, "upgrade_not_supported", "Protocol upgrades (WebSocket) are not supported; send plain HTTP requests."),
  expectationFailed: reply(417, "expectation_failed", "Only the 100-continue expectation is supported."),
  tooManyConnections: (limit) => reply(429, "too_many_connections", `Too many open connections from this client IP; the limit is ${limit}.`),
  rateLimited: (limit) => reply(429, "rate_limited", `Too much request weight used; the limit is ${limit} per minute per client IP. See Retry-After.`)
}

/** A request that does not decode: 400 invalid_parameter naming the first bad parameter; a body that is not JSON (JsonBody) 400 invalid_request. */
export const decodeErrorShape = (error: HttpApiDecodeError): BadRequest => {
  const issue = error.issues[0]
  if (issue?.path.length === 0 && issue.message === notJsonMessage) return new BadRequest({ error: { code: "invalid_request", message: notJsonMessage } })
  const name = String(issue?.path[0] ?? "parameter").slice(0, 40)
  const message = issue === undefined || issue._tag === "Missing"
    ? `Parameter '${name}' is missing.`
    : `Parameter '${name}' is invalid: ${issue.message.split("\n")[0]!.slice(0, 120)}`
  return new BadRequest({ error: { code: "invalid_parameter", message } })
}

/** IETF draft RateLimit-* fields, from the client IP's bucket. */
export const rateLimitHeaders = (usage: Usage): Record<string, string> => ({
  "ratelimit-limit": String(usage.limit),
  "ratelimit-remaining": String(Math.max(0, usage.limit - usage.used)),
  "ratelimit-reset": String(usage.retryAfterSec)
})

export interface ErrorShapeEdgeOptions {
  readonly service: string
  readonly api: HttpApi.HttpApi.Any
  readonly ipWeightPerMin: number
  /** The FairUse routes' own per-IP budget (ServiceEdge.fairUseIpWeightPerMin). */
  readonly fairUseIpWeightPerMin?: number
  readonly bodyBytesMax: number
  readonly bodyBytesMaxByRoute?: ReadonlyMap<string, number>
  readonly fastCached?: ServiceEdge["fastCached"]
  readonly fastRaw?: ServiceEdge["fastRaw"]
  readonly bodyGate?: ServiceEdge["bodyGate"]
  /** GET routes answered before Effect (none by default). */
  readonly fast?: ReadonlyMap<string, FastRender>
}

/** The edge of a listener in the `{error: {code, message}}` shape: no rewrite. */
export const errorShapeEdge = (options: ErrorShapeEdgeOptions): ServiceEdge => ({
  service: options.service,
  errors: errorShapeReplies,
  rewrite: (url) => url,
  usageHeaders: rateLimitHeaders,
  ipWeightPerMin: options.ipWeightPerMin,
  ...(options.fairUseIpWeightPerMin === undefined ? {} : { fairUseIpWeightPerMin: options.fairUseIpWeightPerMin }),
  bodyBytesMax: options.bodyBytesMax,
  refusesMultipart: true,
  ...(options.bodyBytesMaxByRoute === undefined ? {} : { bodyBytesMaxByRoute: options.bodyBytesMaxByRoute }),
  ...(options.fastCached === undefined ? {} : { fastCached: options.fastCached }),
  ...(options.fastRaw === undefined ? {} : { fastRaw: options.fastRaw }),
  ...(options.bodyGate === undefined ? {} : { bodyGate: options.bodyGate }),
  routes: makeRouteTable([...routesOf(options.api), ...docsRoutes]),
  fast: options.fast ?? new Map(),
  preflight: openCorsPaths(options.api),
  cached: new Set(docsRoutes.map((r) => r.path))
})
