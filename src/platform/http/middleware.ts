// What every exchange request passes through before and after its handler: the /api/v3 alias,
// request weight per key or IP (429 with Retry-After over the limit), the weight headers, the
// error safety net (no 500, no stack trace) and HTTP metrics.
import { HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Metric, MetricKey, MetricLabel, Option } from "effect"
import { messages, statusOf, type ApiErrorCode } from "../../../schemas/exchange/errors.ts"
import { prefix } from "../../../schemas/exchange/endpoints.ts"
import { ApiKeys } from "../../exchange/auth/ApiKeys.ts"
import { apiKeyHeader, clientIp } from "../../exchange/auth/SignedRequest.ts"
import { httpLatencyKey, httpRequestsKey } from "../Metrics.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { costOf, isKnownRoute } from "./weights.ts"

export interface Limits {
  readonly keyWeightPerMin: number
  readonly ipWeightPerMin: number
  /** Behind a trusted proxy only: the client IP is the first X-Forwarded-For entry. */
  readonly trustProxy: boolean
}

const v3 = "/api/v3"

export const errorResponse = (code: ApiErrorCode, msg: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson({ code, msg }, { status: statusOf(code), headers })

const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q < 0 ? url : url.slice(0, q)
}

/** Bounded label set for metrics: known routes by name, everything else as "other". */
const routeLabel = (method: string, path: string) =>
  (path === prefix || path.startsWith(prefix + "/")) && isKnownRoute(method, path.slice(prefix.length))
    ? path
    : path === "/metrics" || path === "/ops" || path === "/api-docs"
    ? path
    : "other"

interface HttpMetrics {
  readonly requests: Metric.Metric.Counter<number>
  readonly latency: Metric.Metric.Histogram<number>
}

/** Labelled metrics, one pair per (method, route, status): a bounded set (see routeLabel; node:http accepts only known methods). */
const metricsByLabels = new Map<string, HttpMetrics>()
const httpMetrics = (method: string, route: string, status: number): HttpMetrics => {
  const id = `${method} ${route} ${status}`
  let m = metricsByLabels.get(id)
  if (m === undefined) {
    const labels = [MetricLabel.make("method", method), MetricLabel.make("route", route), MetricLabel.make("status", String(status))]
    m = {
      requests: Metric.fromMetricKey(MetricKey.taggedWithLabels(httpRequestsKey, labels)),
      latency: Metric.fromMetricKey(MetricKey.taggedWithLabels(httpLatencyKey, labels))
    }
    metricsByLabels.set(id, m)
  }
  return m
}

const safetyNet = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && HttpServerError.isServerError(failure.value)) {
    const e = failure.value
    if (e._tag === "RouteNotFound") return Effect.succeed(errorResponse(-1020, messages.unsupported))
    if (e._tag === "RequestError") return Effect.succeed(errorResponse(-1102, messages.malformed))
  }
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  return Effect.logError("request failed unexpectedly", cause).pipe(
    Effect.as(errorResponse(-1001, "Internal error; unable to process your request. Please try again."))
  )
}

export const exchangeMiddleware = (limits: Limits) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R | ApiKeys | RateLimiter> =>
  Effect.gen(function*() {
    const started = performance.now()
    const original = yield* HttpServerRequest.HttpServerRequest
    // Binance clients hard-code /api/v3; serve the same routes there.
    const forwarded = limits.trustProxy ? original.headers["x-forwarded-for"]?.split(",")[0]?.trim() : undefined
    const request = original.url.startsWith(v3) || forwarded
      ? original.modify({
        url: original.url.startsWith(v3) ? prefix + original.url.slice(v3.length) : original.url,
        ...(forwarded ? { remoteAddress: forwarded } : {})
      })
      : original
    const path = pathOf(request.url)
    const extraHeaders: Record<string, string> = {}
    let refused: HttpServerResponse.HttpServerResponse | undefined
    if (path === prefix || path.startsWith(prefix + "/")) {
      const cost = costOf(request.method, path.slice(prefix.length))
      const apiKey = apiKeyHeader(request)
      const known = cost.signed && apiKey !== undefined && Option.isSome(yield* (yield* ApiKeys).lookup(apiKey))
      const bucket = known ? `key:${apiKey}` : `ip:${clientIp(request)}`
      const limit = known ? limits.keyWeightPerMin : limits.ipWeightPerMin
      const limiter = yield* RateLimiter
      const usage = yield* Effect.sync(() => limiter.consume(bucket, cost.weight, limit))
      extraHeaders["x-svc-used-weight-1m"] = String(usage.used)
      extraHeaders["x-mbx-used-weight-1m"] = String(usage.used)
      if (!usage.allowed) {
        refused = errorResponse(-1003, messages.rateLimit(limit), { ...extraHeaders, "retry-after": String(usage.retryAfterSec) })
      }
    }
    const response = refused ?? (yield* app.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.catchAllCause(safetyNet)
    ))
    const out = Object.keys(extraHeaders).length > 0 ? HttpServerResponse.setHeaders(response, extraHeaders) : response
    const metrics = httpMetrics(request.method, routeLabel(request.method, path), out.status)
    yield* Metric.increment(metrics.requests)
    yield* Metric.update(metrics.latency, performance.now() - started)
    return out
  }).pipe(Effect.catchAllCause(safetyNet))
