// The signed lane: POST/DELETE /order and the signed reads account, openOrders and GET /order,
// answered by the edge in node:http instead of the HttpApi pipeline (issue 22). The contract stays
// single-sourced: the endpoints' own urlParams and success schemas from ExchangeApi decode and
// encode, the same checks (checkSigned: IP allowlist, parameters from the signed bytes, timestamp
// and recvWindow, HMAC, scope, the key's weight) refuse with the same typed errors, and the same
// actions (orderActions, orderQueryActions, accountAction) do the work, as one fiber per request.
// What goes is the per-request router, middleware stack and fiber tree (docs/operations.md,
// "Orders benchmark"). A request the lane is not sure to answer exactly as the HttpApi path would
// (a key not in the cache yet, a body that is not a plain form or is chunked, no API key) is left
// to the HttpApi path untouched.
//
// POST and DELETE /order go further when their market is active on this node: the actions'
// callback form (`orderActions.direct`) puts the command on the market's queue and the batch loop
// calls back with the answer, so no fiber runs for the request (session 23: Effect's runtime was
// 28 % of the node's CPU in the orders bench). An answer that is not a plain value or refusal (the
// market left mid-call, its batch failed) continues as the fiber path's own steps.
import type { IncomingMessage } from "node:http"
import { Cause, Effect, Either, Exit, Runtime, Schema } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { type ApiError, apiError, statusOf } from "../../../schemas/exchange/errors.ts"
import { Caller, type Scope, type SignedCall } from "../../../schemas/exchange/security.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import type { SignedLane } from "../../platform/http/ServiceEdge.ts"
import { RateLimiter } from "../../platform/RateLimiter.ts"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { apiKeyOf, bodyBytesMax, checkSigned } from "../auth/SignedAuth.ts"
import { accountAction } from "./AccountHandlers.ts"
import { decodeQuery } from "./decodeErrors.ts"
import { exchangeErrors } from "./ExchangeEdge.ts"
import { type DirectCall, type DirectEnd, orderActions } from "./OrderHandlers.ts"
import { orderQueryActions } from "./OrderQueryHandlers.ts"

type Groups = typeof ExchangeApi.groups

/**
 * Requests the lane took, per process (tests and the bench read it to see which path answered):
 * all of them; those the callback path took (no fiber); and of those, the ones it handed to a
 * fiber after the market's answer (the market left mid-call, its batch failed).
 */
export const signedLaneCounts = { taken: 0, callback: 0, callbackToFiber: 0 }

/** The call was taken by the callback path, which ends it through `finish`. */
const called = Symbol("called")

/** A call's outcome, its body encoded: an Exit is settled at once, another Effect runs as a fiber first. */
type Outcome = Effect.Effect<unknown, ApiError>

interface LaneRoute {
  readonly scope: Scope
  readonly run: (call: SignedCall, finish: (o: Outcome) => void) => Outcome | typeof called
}

/** One endpoint of ExchangeApi served by the lane: its own schemas, its action, and its callback form if it has one. */
const laneRoute = <G extends keyof Groups, P>(
  group: G,
  name: string,
  scope: Scope,
  action: (p: P) => Effect.Effect<unknown, ApiError, Caller>,
  direct?: DirectCall<P>
): readonly [string, LaneRoute] => {
  const endpoint = (ExchangeApi.groups[group] as unknown as { endpoints: Record<string, { method: string; path: string; urlParamsSchema: { _tag: string; value?: Schema.Schema<P, any> }; successSchema: Schema.Schema<unknown, any> }> }).endpoints[name]!
  if (endpoint.urlParamsSchema._tag !== "Some") throw new Error(`${name} has no urlParams schema`)
  const decode = decodeQuery(endpoint.urlParamsSchema.value!)
  const encode = Schema.encode(endpoint.successSchema)
  const encodeNow = Schema.encodeEither(endpoint.successSchema)
  const encoded = (a: unknown) => Effect.orDie(encode(a))
  /** The callback path's end as the fiber path's outcome: the same encoder, the same refusal, the same steps. */
  const outcomeOf = (e: DirectEnd): Outcome =>
    e._tag === "Body" ? Either.match(encodeNow(e.body), { onLeft: (error) => Exit.die(error), onRight: (body) => Exit.succeed(body) })
    : e._tag === "Refused" ? Exit.fail(e.error)
    : (signedLaneCounts.callbackToFiber++, Effect.flatMap(e.rest, encoded))
  return [`${endpoint.method} ${endpoint.path}`, {
    scope,
    run: (call, finish) => {
      const p = decode(call.params)
      if (!p.ok) return Exit.fail(p.error)
      if (direct !== undefined && direct(call, p.value, (e) => finish(outcomeOf(e)))) {
        signedLaneCounts.callback++
        return called
      }
      return Effect.provideService(Effect.flatMap(action(p.value), encoded), Caller, call)
    }
  }]
}

const isApiError = (e: unknown): e is ApiError =>
  typeof e === "object" && e !== null && "code" in e && "msg" in e && typeof (e as ApiError).code === "number"

/** Builds the lane from the node's services; the edge calls it for every request before Effect. */
export const makeSignedLane = Effect.gen(function*() {
  const keys = yield* ApiKeys
  const limiter = yield* RateLimiter
  const keyLimit = (yield* ExchangeConfig).rateLimitKeyWeightPerMin
  const orders = yield* orderActions
  const queries = yield* orderQueryActions
  const account = yield* accountAction
  const runFork = Runtime.runFork(yield* Effect.runtime<never>())
  const routes = new Map<string, LaneRoute>([
    laneRoute("order", "newOrder", "trade", orders.newOrder, orders.direct.newOrder),
    laneRoute("order", "cancelOrder", "trade", orders.cancelOrder, orders.direct.cancelOrder),
    laneRoute("account", "account", "read", account),
    laneRoute("orderQuery", "openOrders", "read", queries.openOrders),
    laneRoute("orderQuery", "getOrder", "read", queries.getOrder)
  ])

  const lane: SignedLane = (req, res, path, rawQuery, state, done) => {
    const route = routes.get(`${req.method} ${path}`)
    if (route === undefined) return false
    const apiKey = apiKeyOf(req.headers)
    const key = apiKey === undefined ? undefined : keys.peek(apiKey)
    const contentType = req.headers["content-type"]
    // A form body or none (a connector's empty JSON body too); anything else is the HttpApi path's.
    const plainBody = contentType === undefined || contentType.startsWith("application/x-www-form-urlencoded") || req.headers["content-length"] === "0"
    if (apiKey === undefined || key === undefined || req.headers["transfer-encoding"] !== undefined || !plainBody) return false
    signedLaneCounts.taken++
    const answer = (status: number, body: string) => {
      res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...state.headers })
      res.end(body)
      done(status)
    }
    const refuse = (e: ApiError) => answer(statusOf(e.code), JSON.stringify({ code: e.code, msg: e.msg }))
    const settle = (exit: Exit.Exit<unknown, ApiError>) => {
      if (Exit.isSuccess(exit)) return answer(200, JSON.stringify(exit.value))
      const failure = Cause.failureOption(exit.cause)
      if (failure._tag === "Some" && isApiError(failure.value)) return refuse(failure.value)
      if (Cause.isInterruptedOnly(exit.cause)) return res.destroy()
      runFork(Effect.logError("exchange: request failed unexpectedly", exit.cause))
      answer(exchangeErrors.internal.status, exchangeErrors.internal.body)
    }
    const finish = (o: Outcome) => (Exit.isExit(o) ? settle(o as Exit.Exit<unknown, ApiError>) : runFork(o).addObserver(settle))
    /** The callback path's end runs in the market's batch loop: nothing it does may throw there. */
    const finishCalled = (o: Outcome) => {
      try {
        finish(o)
      } catch (defect) {
        runFork(Effect.logError("exchange: an order's answer could not be written", Cause.die(defect)))
        res.destroy()
      }
    }
    const verified = (body: string) => {
      const checked = checkSigned({ apiKey, key, ip: state.ip, rawQuery, body, weight: state.weight, headers: state.headers }, route.scope, limiter, keyLimit, Date.now())
      state.headers = checked.headers
      if (!checked.ok) return refuse(checked.error)
      const work = route.run(checked.call, finishCalled)
      if (work !== called) finish(work)
    }
    readBody(req, verified, () => refuse(apiError(-1104, "Request body is too large or unreadable.")))
    return true
  }
  return lane
})

/** A GET has no body to sign (as the HttpApi path reads it); others are read whole, up to the limit. */
const readBody = (req: IncomingMessage, then: (body: string) => void, failed: () => void) => {
  if (req.method === "GET" || req.method === "HEAD") return then("")
  const chunks: Array<Buffer> = []
  let size = 0
  let over = false
  req.on("data", (c: Buffer) => {
    size += c.length
    if (size > bodyBytesMax) over = true
    else chunks.push(c)
  })
  req.once("end", () => (over ? failed() : then(chunks.length === 0 ? "" : Buffer.concat(chunks).toString("utf8"))))
  req.once("error", failed)
}
