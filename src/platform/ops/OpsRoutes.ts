// /metrics (Prometheus text) and /ops (the cluster view as JSON) on a listener's router. The view
// costs five queries, so it is read at most once a second per node; both are rate limited like
// any route (the edge charges their weight) and, with SHARDLINE_OPS_TOKEN set, need it: /metrics as
// a bearer token, /ops as a bearer token or the cookie `GET /ops?token=…` sets (a person's browser).
// Without a token /ops answers the public view (publicView.ts).
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { AppConfig } from "../Config.ts"
import { constantTimeEqual } from "../../crypto/hmac.ts"
import { checkOpsAccess, opsSetCookie } from "../http/opsAccess.ts"
import { InboundWebhooks } from "./InboundWebhooks.ts"
import { type OpsView, readOpsView } from "./OpsView.ts"
import { opsPageCsp, opsPageHtml, opsScript, opsStyles, opsTokenPageHtml, wantsHtml } from "./opsPage.ts"
import { publicOpsView, type PublicOpsView } from "./publicView.ts"

const pageHeaders = { "content-security-policy": opsPageCsp, "x-content-type-options": "nosniff", "cache-control": "no-store", vary: "accept" }
import { nodeMetricsText } from "./processMetrics.ts"

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
      // The page: a bearer token or the cookie /ops?token=… set; a browser without either gets a
      // 401 page saying how to open it, a program the listener's own 401.
      const tokenPage = (reason: "missing" | "wrong") =>
        HttpServerResponse.text(opsTokenPageHtml(reason), { status: 401, contentType: "text/html; charset=utf-8", headers: pageHeaders })
      const refusedTo = (request: HttpServerRequest.HttpServerRequest, reason: "missing" | "wrong") =>
        wantsHtml(request.headers["accept"]) ? tokenPage(reason) : refused(reason)
      const guardedPage = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const access = checkOpsAccess(token, request.headers["authorization"], request.headers["cookie"])
          return access.allowed ? handler : Effect.succeed(refusedTo(request, access.reason))
        })
      /** `GET /ops?token=…`: a right token sets the page's cookie and sends the browser to /ops without it. */
      const signIn = (request: HttpServerRequest.HttpServerRequest, presented: string) => {
        const back = HttpServerResponse.empty({
          status: 303,
          headers: { location: "/ops", "cache-control": "no-store", "referrer-policy": "no-referrer" }
        })
        if (token === undefined) return back // open: nothing to remember
        if (!constantTimeEqual(presented, token)) return refusedTo(request, "wrong")
        return HttpServerResponse.setHeader(back, "set-cookie", opsSetCookie(token))
      }
      let last: { readonly at: number; readonly view: OpsView } | undefined
      const view = Effect.suspend(() =>
        last !== undefined && Date.now() - last.at < opsViewTtlMs
          ? Effect.succeed(last.view)
          : Effect.tap(readOpsView, (v) => Effect.sync(() => (last = { at: Date.now(), view: v })))
      ).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(AppConfig, config), Effect.provideService(InboundWebhooks, webhooks), Effect.timeoutFail({
        duration: opsViewTimeoutMs,
        onTimeout: () => `no answer within ${opsViewTimeoutMs} ms`
      }))
      // Every process of the node when it runs several (processMetrics.ts), else this process's registry.
      yield* router.get("/metrics", guarded(Effect.map(Effect.promise(nodeMetricsText), (text) => HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4" }))))
      // Without a configured token anyone on the host reads it: references, addresses and balances stay out.
      const shown: Effect.Effect<OpsView | PublicOpsView, SqlError.SqlError | string> = token === undefined ? Effect.map(view, publicOpsView) : view
      const json = Effect.flatMap(shown, (v) => HttpServerResponse.json(v)).pipe(
        Effect.catchAll((e) => Effect.succeed(databaseDown(typeof e === "string" ? e : "its queries fail"))),
        Effect.orDie
      )
      const page = HttpServerResponse.text(opsPageHtml, { contentType: "text/html; charset=utf-8", headers: pageHeaders })
      // A browser (Accept: text/html) gets the live page, which reads /ops/stream; programs get JSON.
      yield* router.get("/ops", Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const presented = new URL(request.url, "http://ops").searchParams.get("token")
        if (presented !== null) return Effect.succeed(signIn(request, presented))
        return guardedPage(wantsHtml(request.headers["accept"]) ? Effect.succeed(page) : json)
      }))
      // The page's own assets: no data in them, so no token.
      yield* router.get("/ops/app.js", Effect.succeed(HttpServerResponse.text(opsScript, { contentType: "text/javascript; charset=utf-8", headers: pageHeaders })))
      yield* router.get("/ops/app.css", Effect.succeed(HttpServerResponse.text(opsStyles, { contentType: "text/css; charset=utf-8", headers: pageHeaders })))
    }))
