// One service's listener: its HttpApi with handlers, its OpenAPI documents and offline docs page,
// extra routes (ops on the exchange), behind the node:http edge (Edge.ts). The Effect side adds
// one step after the handler: the edge's rate-limit headers, metrics, and the safety net that
// turns anything unexpected into the service's own error body (never a 500, never a stack trace).
import { HttpApi, HttpApiBuilder, HttpApiSwagger, HttpApp, HttpMethod, HttpMiddleware, HttpServer, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Data, Effect, Layer, Option } from "effect"
import type { AppConfigShape } from "../Config.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { tracingOn } from "../telemetry/Telemetry.ts"
import { makeEdgeServer } from "./Edge.ts"
import { announceListener } from "./NodeListeners.ts"
import type { EdgeSettings } from "./EdgeSettings.ts"
import { recordRequest } from "./httpMetrics.ts"
import { withServerSpan } from "./serverSpan.ts"
import { refusedJson, refusedUrlText } from "./textGuard.ts"
import { edgeStateOf, type Reply, type ServiceEdge } from "./ServiceEdge.ts"

export interface ListenerOptions<E, R, RR> {
  readonly edge: ServiceEdge
  readonly api: HttpApi.HttpApi.Any
  /** `HttpApiBuilder.api(api)` with every group's handlers provided. */
  readonly handlers: Layer.Layer<HttpApi.Api, E, R>
  /** Maps a request that does not decode to one of the API's own errors (its documented code);
   * the request is there to look at the values that did not decode. */
  readonly decodeError: (error: HttpApiDecodeError, request: HttpServerRequest.HttpServerRequest) => unknown
  readonly host: string
  readonly port: number
  /** The setting that chose `port` (named when the port cannot be listened on). */
  readonly portSetting: string
  /** Where clients reach this listener (its public URL setting, or http://host:port): announced
   * in node_listeners while it listens, so the CLI prints what the node uses (NodeListeners.ts). */
  readonly publicUrl: string
  /** Where the OpenAPI 3.1 document is served (the first is the one the docs page reads). */
  readonly openApiPaths: ReadonlyArray<string>
  readonly docsPath: string
  /** More routes on the same router (the exchange's /metrics and /ops). */
  readonly routes?: Layer.Layer<never, never, RR>
  readonly settings: EdgeSettings
  readonly fastLane: boolean
  /** Tracing is on (platform/telemetry): one server span per request through Effect. */
  readonly serverSpans: boolean
}

/** A listener could not take its address (in use, not allowed, not on this machine): one line that
 * names the service, the address and the setting, for the node to print before it exits. */
export class ListenFailed extends Data.TaggedError("ListenFailed")<{ readonly message: string }> {}

const listenProblems: Record<string, string> = {
  EADDRINUSE: "the address is already in use (another process listens there)",
  EACCES: "not allowed to listen there (a port below 1024 needs privileges)",
  EADDRNOTAVAIL: "the host is not an address of this machine"
}

/** The one line for a server that did not start listening. */
export const listenFailedMessage = (service: string, host: string, port: number, setting: string, cause: unknown): string => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String((cause as { code: unknown }).code) : undefined
  const why = (code !== undefined ? listenProblems[code] : undefined) ?? (cause instanceof Error ? cause.message.split("\n")[0]! : String(cause))
  return `the ${service} listener cannot listen on ${host}:${port} (${setting}, SHARDLINE_HTTP_HOST): ${why}`
}

/** What every listener of a node takes from the platform's settings: host, edge settings, fast lane, server spans. */
export const sharedListenerOptions = (config: AppConfigShape) => ({
  host: config.httpHost,
  settings: config.httpEdge,
  fastLane: config.httpFastLane,
  serverSpans: tracingOn(config.telemetry)
})

export const replyResponse = (reply: Reply, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(reply.body, { status: reply.status, contentType: "application/json", headers })

/** What the step after the handler answers for a failure no handler mapped (exported for its unit test). */
export const safetyNet = (edge: ServiceEdge) => (cause: Cause.Cause<unknown>) => {
  // A body that is not the JSON it claims reaches here as a RequestError, failed or (from
  // HttpApi's payload decode) died with: either way it is the client's malformed request.
  const failure = Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause))
  if (Option.isSome(failure) && HttpServerError.isServerError(failure.value)) {
    if (failure.value._tag === "RouteNotFound") return Effect.succeed(replyResponse(edge.errors.notFound))
    if (failure.value._tag === "RequestError") return Effect.succeed(replyResponse(edge.errors.malformed))
  }
  // Interrupted while the client still waits (this fiber itself was not: a client that went away
  // interrupts the whole request, and nothing here runs): an entity call cut short, as when the
  // runner loses its shards under load. Found by the fuzz run as a 503 with an empty body; it is
  // the service's retryable 503 in its own shape.
  if (Cause.isInterruptedOnly(cause)) {
    return Effect.logWarning(`${edge.service}: request interrupted before its answer (answered 503, retry)`).pipe(
      Effect.as(replyResponse(edge.errors.internal, { "retry-after": "1" })))
  }
  return Effect.logError(`${edge.service}: request failed unexpectedly`, cause).pipe(Effect.as(replyResponse(edge.errors.internal)))
}

/** Why this request's body is refused before any handler reads it (textGuard.ts), or undefined.
 * Streamed uploads (routes with their own body limit) are raw bytes and are not read here; the
 * text read here is the one the handler gets (the request caches it). */
const refusedBody = (edge: ServiceEdge, request: HttpServerRequest.HttpServerRequest, route: string) => {
  if (!HttpMethod.hasBody(request.method) || edge.bodyBytesMaxByRoute?.has(route) === true) return Effect.succeed(undefined)
  const type = (request.headers["content-type"] ?? "application/json").toLowerCase()
  const check = type.includes("json") ? refusedJson : type.includes("x-www-form-urlencoded") ? refusedUrlText : undefined
  if (check === undefined) return Effect.succeed(undefined)
  // A body that cannot be read is the handler's to answer (413, 400), as before.
  return Effect.match(request.text, { onFailure: () => undefined, onSuccess: check })
}

/** The one step around the handler: the body guard, headers the edge prepared, metrics, the safety
 * net, and with tracing on the request's server span. */
const afterHandler = (edge: ServiceEdge, serverSpans: boolean) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const state = edgeStateOf(request)
    const guarded = Effect.flatMap(refusedBody(edge, request, state.route), (reason) =>
      reason === undefined ? app : Effect.succeed(replyResponse(edge.errors.refusedText(reason))))
    const handled = Effect.map(Effect.catchAllCause(guarded, safetyNet(edge)), (response) => {
      if (!state.answered) recordRequest(edge.service, request.method, state.route, response.status, performance.now() - state.started)
      return HttpServerResponse.setHeaders(response, state.headers)
    })
    return serverSpans ? withServerSpan(edge.service, request, state.route, handled) : handled
  })

/**
 * A listening service. Built fresh: HttpApiBuilder's Router, Middleware and Api are global tags
 * whose layers would otherwise be shared (memoised) by every listener of the process, merging
 * three services' routes into one router. What it needs from outside (RateLimiter, the handlers'
 * services) still comes from the node's single build.
 */
export const listener = <E, R, RR = never>(options: ListenerOptions<E, R, RR>) => {
  const decodeErrors = HttpApiBuilder.middleware((app) =>
    Effect.catchAll(app, (e) =>
      (e as { _tag?: string })._tag === "HttpApiDecodeError"
        ? Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.fail(options.decodeError(e as HttpApiDecodeError, request) as never))
        : Effect.fail(e)))
  const serve = Layer.unwrapEffect(Effect.gen(function*() {
    const limiter = yield* RateLimiter
    const app = yield* HttpApiBuilder.httpApp
    return HttpServer.serve(afterHandler(options.edge, options.serverSpans)(app)).pipe(
      // The platform's own span per request stays off: it records headers and queries (serverSpan.ts
      // makes ours when tracing is on; with it off no span is made at all, which saved a quarter of
      // a request's CPU).
      HttpMiddleware.withTracerDisabledWhen(() => true),
      Layer.provide(NodeHttpServer.layer(
        () => makeEdgeServer({ edge: options.edge, limiter, settings: options.settings, fastLane: options.fastLane }),
        { host: options.host, port: options.port }
      ).pipe(Layer.catchAll((e) => Layer.fail(new ListenFailed({
        message: listenFailedMessage(options.edge.service, options.host, options.port, options.portSetting, e._tag === "ServeError" ? e.cause : e)
      })))))
    )
  }))
  const [docsSpec, ...moreSpecs] = options.openApiPaths
  const docs = [docsSpec!, ...moreSpecs].map((path) => HttpApiBuilder.middlewareOpenApi({ path: path as `/${string}` }))
  // Announced once the server listens (the layer below is built first), withdrawn when it stops.
  const announced = Layer.scopedDiscard(announceListener(options.edge.service, options.publicUrl)).pipe(Layer.provide(serve))
  return Layer.fresh(announced.pipe(
    Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]),
    Layer.provide(HttpApiSwagger.layer({ path: options.docsPath as `/${string}` })),
    Layer.provide(Layer.mergeAll(Layer.empty, ...docs)),
    Layer.provide((options.routes ?? Layer.empty) as Layer.Layer<never, never, RR>),
    Layer.provide(decodeErrors),
    Layer.provide(options.handlers)
  ))
}
