// /metrics (Prometheus text) and /ops (the cluster view as JSON) on a listener's router. The view
// costs five queries, so it is read at most once a second per node; both are rate limited like
// any route (the edge charges their weight) and, with SHARDLINE_OPS_TOKEN set, need it. Without a
// token /ops answers the public view (publicView.ts).
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { AppConfig } from "../Config.ts"
import { checkOpsAccess } from "../http/opsAccess.ts"
import { InboundWebhooks } from "./InboundWebhooks.ts"
import { type OpsView, readOpsView } from "./OpsView.ts"
import { opsPageCsp, opsPageHtml, opsScript, opsStyles, wantsHtml } from "./opsPage.ts"
import { publicOpsView, type PublicOpsView } from "./publicView.ts"

const pageHeaders = { "content-security-policy": opsPageCsp, "x-content-type-options": "nosniff", "cache-control": "no-store", vary: "accept" }
import { render } from "./prometheus.ts"

/** How long one read of the ops view is served to every caller. */
export const opsViewTtlMs = 1000
/** A read of the view that takes longer than this means the database is not answering. */
export const opsViewTimeoutMs = 3000

/** The database is down (or not answering): 503 in the exchange's shape, saying so. */
const databaseDown = (reason: string) =>
  HttpServerResponse.unsafeJson(
    { code: -1001, msg: `The database is down; the ops view cannot be read (${reason}).`, database: "down" },
    { status: 503 }
  )

/** `refused` answers a missing or wrong token in the listener's own error shape. */
export const opsRoutes = (refused: (reason: "missing" | "wrong") => HttpServerResponse.HttpServerResponse) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const sql = yield* SqlClient.SqlClient
      const webhooks = yield* InboundWebhooks
      const token = Option.getOrUndefined(Option.map(config.opsToken, Redacted.value))
      const guarded = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const access = checkOpsAccess(token, request.headers["authorization"])
          return access.allowed ? handler : Effect.succeed(refused(access.reason))
        })
      let last: { readonly at: number; readonly view: OpsView } | undefined
      const view = Effect.suspend(() =>
        last !== undefined && Date.now() - last.at < opsViewTtlMs
          ? Effect.succeed(last.view)
          : Effect.tap(readOpsView, (v) => Effect.sync(() => (last = { at: Date.now(), view: v })))
      ).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(InboundWebhooks, webhooks), Effect.timeoutFail({
        duration: opsViewTimeoutMs,
        onTimeout: () => `no answer within ${opsViewTimeoutMs} ms`
      }))
      yield* router.get("/metrics", guarded(Effect.sync(() => HttpServerResponse.text(render(), { contentType: "text/plain; version=0.0.4" }))))
      // Without a configured token anyone on the host reads it: references, addresses and balances stay out.
      const shown: Effect.Effect<OpsView | PublicOpsView, SqlError.SqlError | string> = token === undefined ? Effect.map(view, publicOpsView) : view
      const json = Effect.flatMap(shown, (v) => HttpServerResponse.json(v)).pipe(
        Effect.catchAll((e) => Effect.succeed(databaseDown(typeof e === "string" ? e : "its queries fail"))),
        Effect.orDie
      )
      const page = HttpServerResponse.text(opsPageHtml, { contentType: "text/html; charset=utf-8", headers: pageHeaders })
      // A browser (Accept: text/html) gets the live page, which reads /ops/stream; programs get JSON.
      yield* router.get("/ops", guarded(Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        wantsHtml(request.headers["accept"]) ? Effect.succeed(page) : json)))
      // The page's own assets: no data in them, so no token.
      yield* router.get("/ops/app.js", Effect.succeed(HttpServerResponse.text(opsScript, { contentType: "text/javascript; charset=utf-8", headers: pageHeaders })))
      yield* router.get("/ops/app.css", Effect.succeed(HttpServerResponse.text(opsStyles, { contentType: "text/css; charset=utf-8", headers: pageHeaders })))
    }))
