// One server span per request when tracing is on (platform/telemetry). Ours instead of the
// platform's tracer middleware, which records every request header and the query string (API
// keys, signatures, link tokens) into the span: this one records the method, the route template,
// the service and the status, and continues a caller's W3C traceparent (or b3) if it sent one.
import { HttpTraceContext, type HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"

export const withServerSpan = <E, R>(
  service: string,
  request: HttpServerRequest.HttpServerRequest,
  route: string,
  handled: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.useSpan(`${request.method} ${route}`, {
    kind: "server",
    parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers)),
    captureStackTrace: false,
    attributes: { "http.request.method": request.method, "http.route": route, "shardline.service": service }
  }, (span) =>
    Effect.tap(Effect.withParentSpan(handled, span), (response) => {
      span.attribute("http.response.status_code", response.status)
    }))
