// Order endpoints, trade scope: parameters arrive decoded by their schemas from exactly the signed
// bytes; the order goes to its market's Market entity: straight into its queue when this node runs
// it (LocalMarkets.ts), else as one volatile cluster message to its owner. Either answers after the
// group commit and the inline settlement broadcast. POST and DELETE /order also have a callback
// form for the signed lane (`direct`): the same steps with no fiber per request while the market
// is local and answers plainly; anything else continues as the Effect below.
import { HttpApiBuilder } from "@effect/platform"
import { randomBytes } from "node:crypto"
import { Effect, Exit } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { type ApiError, apiError, type ApiErrorCode, messages } from "../../../schemas/exchange/errors.ts"
import { Batch, type BatchAnswer, type BatchCommand, Cancel, CancelAll, Market as MarketEntity, OrderRefused, type OrderState, Place, type Placed } from "../../../schemas/exchange/market.ts"
import type { CancelOpenOrdersParams, CancelOrderParams, NewOrderParams } from "../../../schemas/exchange/params.ts"
import { Caller, type SignedCall } from "../../../schemas/exchange/security.ts"
import { LocalMarkets, MarketGone, send } from "../market/LocalMarkets.ts"
import { makeRemoteBatches } from "../market/remoteBatches.ts"
import { parseId } from "../markets/ids.ts"
import { recordedSpan } from "../../platform/telemetry/batchSpan.ts"
import { MarketRegistry, type MarketRegistryShape } from "../markets/MarketRegistry.ts"
import type { CanceledOrder } from "../../../schemas/exchange/orders.ts"
import type { Market } from "../markets/marketSpec.ts"
import type { Checked } from "./decodeErrors.ts"
import { canceledOf, newOrderBody } from "./orderBodies.ts"

/** Binance's cancelRestrictions as the status the order must still have. */
const restrictionStatus = (r: "ONLY_NEW" | "ONLY_PARTIALLY_FILLED" | undefined) =>
  r === undefined ? undefined : r === "ONLY_NEW" ? "NEW" as const : "PARTIALLY_FILLED" as const

/** How order calls reached their market, per process (tests and the bench read it). */
export const marketPathCounts = { direct: 0, cluster: 0, movedMidCall: 0 }

/** Random bytes for generated ids, drawn 4 KiB at a time: one call per 256 ids (one per id was 2 % of the node's CPU in the orders bench). */
const idBytes = { pool: Buffer.alloc(0), at: 0 }
const idBytesPool = 4096

/** Binance's generated client order ids are 22 characters of this kind (16 random bytes). */
export const newClientOrderId = () => {
  if (idBytes.at + 16 > idBytes.pool.length) {
    idBytes.pool = randomBytes(idBytesPool)
    idBytes.at = 0
  }
  idBytes.at += 16
  return idBytes.pool.toString("base64url", idBytes.at - 16, idBytes.at).slice(0, 22)
}

const unknownStatus = "Timeout waiting for response from backend server. Send status unknown; execution status unknown."

/** A refusal keeps its code; anything else (the market unreachable, a failed commit) is "status unknown". */
const fromEntity = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.catchAllCause((cause) => {
      const failure = cause._tag === "Fail" ? cause.error : undefined
      if (failure !== undefined && failure._tag === "OrderRefused") {
        const { code, msg } = failure as unknown as { code: ApiErrorCode; msg: string }
        return Effect.fail(apiError(code, msg))
      }
      return Effect.logWarning("order call failed", cause).pipe(Effect.zipRight(Effect.fail(apiError(-1007, unknownStatus))))
    })
  )

const fromChecked = <A>(c: Checked<A>): Effect.Effect<A, ApiError> => (c.ok ? Effect.succeed(c.value) : Effect.fail(c.error))

const findMarket = (registry: MarketRegistryShape, symbol: string): Checked<Market> => {
  const market = registry.find(symbol)
  return market ? { ok: true, value: market } : { ok: false, error: apiError(-1121, "Invalid symbol.") }
}

export const marketOf = (registry: MarketRegistryShape, symbol: string) => fromChecked(findMarket(registry, symbol))

type OrderRef = { readonly symbol?: string | undefined; readonly orderId?: string | undefined; readonly origClientOrderId?: string | undefined }
interface RefFound {
  readonly market: Market
  readonly orderId: number | undefined
  readonly clientOrderId: string | undefined
}

/**
 * The market an order reference names: orderId alone (ids are unique across markets), or
 * symbol + origClientOrderId. A symbol that does not match the order's market is unknown order.
 */
const findRef = (registry: MarketRegistryShape, ref: OrderRef, unknown: ApiErrorCode): Checked<RefFound> => {
  if (ref.orderId === undefined && ref.origClientOrderId === undefined) return { ok: false, error: apiError(-1102, messages.missing("orderId")) }
  const named = ref.symbol === undefined ? undefined : findMarket(registry, ref.symbol)
  if (named !== undefined && !named.ok) return named
  if (ref.orderId !== undefined) {
    const id = parseId(ref.orderId)
    const market = id === undefined ? undefined : registry.ofId(id)
    if (id === undefined || market === undefined || (named !== undefined && named.value.id !== market.id)) {
      return { ok: false, error: apiError(unknown, unknown === -2011 ? "Unknown order sent." : "Order does not exist.") }
    }
    return { ok: true, value: { market, orderId: id, clientOrderId: undefined } }
  }
  if (named === undefined) return { ok: false, error: apiError(-1102, messages.missing("symbol")) }
  return { ok: true, value: { market: named.value, orderId: undefined, clientOrderId: ref.origClientOrderId } }
}

export const marketOfRef = (registry: MarketRegistryShape, ref: OrderRef, unknown: ApiErrorCode) => fromChecked(findRef(registry, ref, unknown))

/**
 * How the signed lane's callback path ends a call: the success body (encoded by the lane), a
 * refusal, or the rest of the call as an Effect (the Effect path's own steps, from the market's
 * answer on) when the answer was not a plain one: the market left mid-call, its batch failed.
 */
export type DirectEnd =
  | { readonly _tag: "Body"; readonly body: unknown }
  | { readonly _tag: "Refused"; readonly error: ApiError }
  | { readonly _tag: "Rest"; readonly rest: Effect.Effect<unknown, ApiError> }

/** A call the callback path takes: false if it does not (the market is not active here), and the caller runs the Effect. */
export type DirectCall<P> = (caller: SignedCall, p: P, end: (e: DirectEnd) => void) => boolean

/**
 * One order call once its market and command are known: the answer it expects from the market
 * (`tag`, and `value` read from it; a refusal is the other plain answer), the single cluster message it takes instead when its trace is
 * recorded or its market left mid-call (`single`, made only when taken: a cluster client call
 * builds its address, shard id and request, which the direct path does not need), and the
 * response body made from the value.
 */
interface OrderCall<V, B> {
  readonly symbol: string
  readonly command: BatchCommand
  readonly tag: BatchAnswer["_tag"]
  readonly value: (a: BatchAnswer) => V
  readonly single: () => Effect.Effect<V, { readonly _tag: string }>
  readonly body: (v: V) => B
}

/** The order endpoints' work, given the caller: shared by the HttpApi group and the edge's signed lane. */
export const orderActions = Effect.gen(function*() {
  const registry = yield* MarketRegistry
  const markets = yield* MarketEntity.client
  const locals = yield* LocalMarkets
  const remote = makeRemoteBatches((symbol, commands) => markets(symbol).Batch(new Batch({ commands })))
  /** A batch's answer as the single call's: its value, or its refusal. */
  const answered = <V, B>(call: OrderCall<V, B>) => (a: BatchAnswer) =>
    a._tag === call.tag ? Effect.succeed(call.value(a))
    : a._tag === "Refused" ? Effect.fail(new OrderRefused({ code: a.code, msg: a.msg }))
    : Effect.dieMessage(`the market answered ${a._tag} to a ${call.tag} command`)
  /** The local market's answer as the call's; through the cluster if the market left before answering. */
  const fromLocal = <V, B>(call: OrderCall<V, B>, sent: Effect.Effect<BatchAnswer, MarketGone>) =>
    Effect.flatMap(sent, answered(call)).pipe(
      Effect.catchIf((e): e is MarketGone => e instanceof MarketGone, () => {
        marketPathCounts.movedMidCall++
        return call.single()
      })
    )
  /**
   * Through this node's own Market when it runs here (the cluster if it left mid-call), else in a
   * Batch with this turn's other calls for that market; both answer as a Batch does, which
   * `answered` turns into the single call's value or refusal. A request whose trace is recorded
   * takes the single cluster message instead, as the signed lane steps aside for it: its span tree
   * then shows the message and the entity's handler (docs/runtime.md, "Tracing").
   */
  const toMarket = <V, B>(call: OrderCall<V, B>) =>
    Effect.flatMap(recordedSpan, (span) => {
      if (span !== undefined) return call.single()
      const inbox = locals.get(call.symbol)
      if (inbox === undefined) {
        marketPathCounts.cluster++
        return Effect.flatMap(remote(call.symbol, call.command), answered(call))
      }
      marketPathCounts.direct++
      return fromLocal(call, send(inbox, call.command))
    })
  /** The call as an Effect: its body, or its refusal (a failure past the market is "status unknown"). */
  const run = <V, B>(call: OrderCall<V, B>) => Effect.map(fromEntity(toMarket(call)), call.body)
  /**
   * The call without a fiber, when its market is active here: the local market's answer, if it is
   * the value or a refusal, ends the call as `run` would; any other (MarketGone, a failed batch)
   * continues as `run` does from the same answer, as an Effect.
   */
  const direct = <V, B>(call: OrderCall<V, B>, end: (e: DirectEnd) => void): boolean => {
    const inbox = locals.get(call.symbol)
    if (inbox === undefined) return false
    const taken = inbox.offer(call.command, (exit) => end(directEnd(call, exit)))
    if (taken) marketPathCounts.direct++
    return taken
  }
  /** The call's end from the market's answer. It runs in the market's batch loop, so a throw (a bug) ends the call as a defect does `run`. */
  const directEnd = <V, B>(call: OrderCall<V, B>, exit: Exit.Exit<BatchAnswer, MarketGone>): DirectEnd => {
    try {
      const a = Exit.isSuccess(exit) ? exit.value : undefined
      if (a !== undefined && a._tag === call.tag) return { _tag: "Body", body: call.body(call.value(a)) }
      if (a !== undefined && a._tag === "Refused") return { _tag: "Refused", error: apiError(a.code as ApiErrorCode, a.msg) }
      return { _tag: "Rest", rest: Effect.map(fromEntity(fromLocal(call, exit)), call.body) }
    } catch (defect) {
      return { _tag: "Rest", rest: Effect.die(defect) }
    }
  }
  /** A refusal before the market ends a direct call at once, as it fails the Effect. */
  const directOf = <P, A, V, B>(find: (p: P) => Checked<A>, callOf: (caller: SignedCall, p: P, found: A) => OrderCall<V, B>): DirectCall<P> =>
    (caller, p, end) => {
      const found = find(p)
      if (!found.ok) {
        end({ _tag: "Refused", error: found.error })
        return true
      }
      return direct(callOf(caller, p, found.value), end)
    }

  const placeCall = (caller: SignedCall, p: NewOrderParams, market: Market): OrderCall<Placed, ReturnType<typeof newOrderBody>> => {
    // Not validated again: every field is already of its type (decoded parameters, the verified caller).
    const place = new Place({ userId: caller.userId, clientOrderId: p.newClientOrderId ?? newClientOrderId(), side: p.side, price: p.price, quantity: p.quantity }, { disableValidation: true })
    return {
      symbol: market.symbol,
      command: { _tag: "Place", place },
      tag: "Placed",
      value: (a) => (a as Extract<BatchAnswer, { _tag: "Placed" }>).placed,
      single: () => markets(market.symbol).Place(place),
      body: (placed) => newOrderBody(market, placed, p.newOrderRespType)
    }
  }
  const cancelCall = (caller: SignedCall, p: CancelOrderParams, ref: RefFound): OrderCall<OrderState, CanceledOrder> => {
    const cancel = new Cancel({ userId: caller.userId, orderId: ref.orderId, clientOrderId: ref.clientOrderId, onlyIf: restrictionStatus(p.cancelRestrictions) }, { disableValidation: true })
    return {
      symbol: ref.market.symbol,
      command: { _tag: "Cancel", cancel },
      tag: "Canceled",
      value: (a) => (a as Extract<BatchAnswer, { _tag: "Canceled" }>).order,
      single: () => markets(ref.market.symbol).Cancel(cancel),
      body: (order) => canceledOf(order, p.newClientOrderId ?? newClientOrderId(), Date.now())
    }
  }
  const cancelAllCall = (caller: SignedCall, market: Market): OrderCall<ReadonlyArray<OrderState>, Array<CanceledOrder>> => {
    const cancelAll = new CancelAll({ userId: caller.userId })
    return {
      symbol: market.symbol,
      command: { _tag: "CancelAll", cancelAll },
      tag: "CanceledAll",
      value: (a) => (a as Extract<BatchAnswer, { _tag: "CanceledAll" }>).orders,
      single: () => markets(market.symbol).CancelAll(cancelAll),
      body: (orders) => {
        const now = Date.now()
        return orders.map((o) => canceledOf(o, newClientOrderId(), now))
      }
    }
  }
  const findPlace = (p: NewOrderParams) => findMarket(registry, p.symbol)
  const findCancel = (p: CancelOrderParams) => findRef(registry, p, -2011)
  return {
    newOrder: (p: NewOrderParams) =>
      Effect.flatMap(Caller, (caller) => Effect.flatMap(fromChecked(findPlace(p)), (market) => run(placeCall(caller, p, market)))),
    cancelOrder: (p: CancelOrderParams) =>
      Effect.flatMap(Caller, (caller) => Effect.flatMap(fromChecked(findCancel(p)), (ref) => run(cancelCall(caller, p, ref)))),
    cancelOpenOrders: (p: CancelOpenOrdersParams) =>
      Effect.flatMap(Caller, (caller) => Effect.flatMap(marketOf(registry, p.symbol), (market) => run(cancelAllCall(caller, market)))),
    /** POST and DELETE /order for the signed lane's callback path. */
    direct: {
      newOrder: directOf(findPlace, placeCall),
      cancelOrder: directOf(findCancel, cancelCall)
    }
  }
})

export const OrderHandlers = HttpApiBuilder.group(ExchangeApi, "order", (handlers) =>
  Effect.map(orderActions, (act) =>
    handlers
      .handle("newOrder", ({ urlParams }) => act.newOrder(urlParams))
      .handle("cancelOrder", ({ urlParams }) => act.cancelOrder(urlParams))
      .handle("cancelOpenOrders", ({ urlParams }) => act.cancelOpenOrders(urlParams))))
