// One node's HTTP server: the HttpApi (exchange groups), its OpenAPI document and offline docs
// page, the ops routes, and the exchange middleware around all of it.
import { createServer } from "node:http"
import { HttpApiBuilder, HttpApiSwagger, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Redacted } from "effect"
import { Api } from "../../../schemas/exchange/api.ts"
import { apiError, messages } from "../../../schemas/exchange/errors.ts"
import { prefix } from "../../../schemas/exchange/endpoints.ts"
import { AccountHandlers } from "../../exchange/http/AccountHandlers.ts"
import { OrderHandlers } from "../../exchange/http/OrderHandlers.ts"
import { PublicHandlers } from "../../exchange/http/PublicHandlers.ts"
import { AppConfig } from "../Config.ts"
import { readOpsView } from "../ops/OpsView.ts"
import { render } from "../ops/prometheus.ts"
import { answerClientErrors } from "./clientErrors.ts"
import { errorResponse, exchangeMiddleware } from "./middleware.ts"
import { checkOpsAccess } from "./opsAccess.ts"

/** A malformed parameter never becomes a 500: the decoder's failure is a documented -1102. */
type Failing = Effect.Effect<HttpServerResponse.HttpServerResponse, { readonly _tag: "HttpApiDecodeError"; readonly message: string }>
const DecodeErrors = HttpApiBuilder.middleware(Api, (app) =>
  Effect.catchTag(app as unknown as Failing, "HttpApiDecodeError", (e) =>
    Effect.fail(apiError(-1102, `${messages.missing("parameter")} ${e.message}`.slice(0, 300)))) as unknown as typeof app)

const opsRefused = (reason: "missing" | "wrong") =>
  errorResponse(-2015, reason === "missing" ? "Ops endpoints need Authorization: Bearer <SHARDLINE_OPS_TOKEN>." : "Invalid ops token.", {
    "www-authenticate": "Bearer"
  })

const OpsRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const token = Option.getOrUndefined(Option.map(config.opsToken, Redacted.value))
    const guarded = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const access = checkOpsAccess(token, request.headers["authorization"])
        return access.allowed ? handler : Effect.succeed(opsRefused(access.reason))
      })
    yield* router.get("/metrics", guarded(Effect.sync(() => HttpServerResponse.text(render(), { contentType: "text/plain; version=0.0.4" }))))
    const sql = yield* SqlClient.SqlClient
    yield* router.get("/ops", guarded(Effect.flatMap(readOpsView, (view) => HttpServerResponse.json(view)).pipe(
      Effect.orDie,
      Effect.provideService(SqlClient.SqlClient, sql)
    )))
  }))

export const ApiLive = HttpApiBuilder.api(Api).pipe(Layer.provide([PublicHandlers, AccountHandlers, OrderHandlers, DecodeErrors]))

export const layer = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* AppConfig
  const middleware = exchangeMiddleware({
    keyWeightPerMin: config.rateLimitKeyWeightPerMin,
    ipWeightPerMin: config.rateLimitIpWeightPerMin,
    trustProxy: config.trustProxy
  })
  // Like HttpApiBuilder.serve, but our middleware wraps the app itself: the server's own
  // middleware slot runs after the response is already written, too late to add headers or
  // turn a RouteNotFound into an error body.
  const serve = Layer.unwrapEffect(Effect.map(HttpApiBuilder.httpApp, (app) => HttpServer.serve(middleware(app)))).pipe(
    Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer])
  )
  return serve.pipe(
    Layer.provide(HttpApiSwagger.layer({ path: "/api-docs" })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: `${prefix}/openapi.json` })),
    Layer.provide(OpsRoutes),
    Layer.provide(ApiLive),
    Layer.provide(NodeHttpServer.layer(() => answerClientErrors(createServer()), { host: config.httpHost, port: config.httpPort }))
  )
}))
