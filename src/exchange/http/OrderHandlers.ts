// Order endpoints, trade scope: parameters arrive decoded by their schemas from exactly the signed
// bytes; the order goes to its market's Market entity: straight into its queue when this node runs
// it (LocalMarkets.ts), else as one volatile cluster message to its owner. Either answers after the
// group commit and the inline settlement broadcast.
import { HttpApiBuilder } from "@effect/platform"
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { apiError, type ApiErrorCode, messages } from "../../../schemas/exchange/errors.ts"
import { Batch, type BatchAnswer, type BatchCommand, Cancel, CancelAll, Market as MarketEntity, OrderRefused, type OrderState, Place, type Placed } from "../../../schemas/exchange/market.ts"
import type { CancelOpenOrdersParams, CancelOrderParams, NewOrderParams } from "../../../schemas/exchange/params.ts"
import { Caller } from "../../../schemas/exchange/security.ts"
import { LocalMarkets, MarketGone } from "../market/LocalMarkets.ts"
import { makeRemoteBatches } from "../market/remoteBatches.ts"
import { parseId } from "../markets/ids.ts"
import { recordedSpan } from "../../platform/telemetry/batchSpan.ts"
import { MarketRegistry, type MarketRegistryShape } from "../markets/MarketRegistry.ts"
import { canceledOf, newOrderBody } from "./orderBodies.ts"

/** Binance's generated client order ids are 22 characters of this kind. */
/** Binance's cancelRestrictions as the status the order must still have. */
const restrictionStatus = (r: "ONLY_NEW" | "ONLY_PARTIALLY_FILLED" | undefined) =>
  r === undefined ? undefined : r === "ONLY_NEW" ? "NEW" as const : "PARTIALLY_FILLED" as const

/** How order calls reached their market, per process (tests and the bench read it). */
export const marketPathCounts = { direct: 0, cluster: 0, movedMidCall: 0 }

export const newClientOrderId = () => randomBytes(16).toString("base64url").slice(0, 22)

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

export const marketOf = (registry: MarketRegistryShape, symbol: string) => {
  const market = registry.find(symbol)
  return market ? Effect.succeed(market) : Effect.fail(apiError(-1121, "Invalid symbol."))
}

/**
 * The market an order reference names: orderId alone (ids are unique across markets), or
 * symbol + origClientOrderId. A symbol that does not match the order's market is unknown order.
 */
export const marketOfRef = (
  registry: MarketRegistryShape,
  ref: { readonly symbol?: string | undefined; readonly orderId?: string | undefined; readonly origClientOrderId?: string | undefined },
  unknown: ApiErrorCode
) =>
  Effect.gen(function*() {
    if (ref.orderId === undefined && ref.origClientOrderId === undefined) return yield* Effect.fail(apiError(-1102, messages.missing("orderId")))
    const named = ref.symbol === undefined ? undefined : yield* marketOf(registry, ref.symbol)
    if (ref.orderId !== undefined) {
      const id = parseId(ref.orderId)
      const market = id === undefined ? undefined : registry.ofId(id)
      if (id === undefined || market === undefined || (named !== undefined && named.id !== market.id)) {
        return yield* Effect.fail(apiError(unknown, unknown === -2011 ? "Unknown order sent." : "Order does not exist."))
      }
      return { market, orderId: id, clientOrderId: undefined }
    }
    if (named === undefined) return yield* Effect.fail(apiError(-1102, messages.missing("symbol")))
    return { market: named, orderId: undefined, clientOrderId: ref.origClientOrderId }
  })

/** The order endpoints' work, given the caller: shared by the HttpApi group and the edge's signed lane. */
export const orderActions = Effect.gen(function*() {
  const registry = yield* MarketRegistry
  const markets = yield* MarketEntity.client
  const locals = yield* LocalMarkets
  type RemoteError = Effect.Effect.Error<ReturnType<ReturnType<typeof markets>["Batch"]>>
  const remote = makeRemoteBatches((symbol, commands) => markets(symbol).Batch(new Batch({ commands })))
  /** A batch's answer as the single call's: its value, or its refusal. */
  const answered = <T extends BatchAnswer["_tag"], A>(tag: T, value: (a: Extract<BatchAnswer, { _tag: T }>) => A) => (a: BatchAnswer) =>
    a._tag === tag ? Effect.succeed(value(a as Extract<BatchAnswer, { _tag: T }>))
    : a._tag === "Refused" ? Effect.fail(new OrderRefused({ code: a.code, msg: a.msg }))
    : Effect.dieMessage(`the market answered ${a._tag} to a ${tag} command`)
  /**
   * Through this node's own Market when it runs here (the cluster if it left mid-call), else in a
   * Batch with this turn's other calls for that market; both answer as a Batch does, which
   * `answered` turns into the single call's value or refusal. A request whose trace is recorded
   * takes the single cluster message instead, as the signed lane steps aside for it: its span tree
   * then shows the message and the entity's handler (docs/runtime.md, "Tracing"). `single` is
   * made only when taken: a cluster client call builds its address, shard id and request, which
   * the direct path does not need.
   */
  const toMarket = <A, E, R>(
    symbol: string,
    command: BatchCommand,
    answer: (a: BatchAnswer) => Effect.Effect<A, OrderRefused>,
    single: () => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | OrderRefused | RemoteError, R> =>
    Effect.flatMap(recordedSpan, (span): Effect.Effect<A, E | OrderRefused | RemoteError, R> => {
      if (span !== undefined) return single()
      const inbox = locals.get(symbol)
      if (inbox === undefined) {
        marketPathCounts.cluster++
        return Effect.flatMap(remote(symbol, command), answer)
      }
      marketPathCounts.direct++
      return Effect.flatMap(inbox.send(command), answer).pipe(
        Effect.catchIf((e): e is MarketGone => e instanceof MarketGone, () => {
          marketPathCounts.movedMidCall++
          return single()
        })
      )
    })
  return {
    newOrder: (p: NewOrderParams) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const market = yield* marketOf(registry, p.symbol)
        const place = new Place({ userId: caller.userId, clientOrderId: p.newClientOrderId ?? newClientOrderId(), side: p.side, price: p.price, quantity: p.quantity })
        const placed = yield* fromEntity(toMarket(market.symbol, { _tag: "Place", place }, answered("Placed", (a): Placed => a.placed), () => markets(market.symbol).Place(place)))
        return newOrderBody(market, placed, p.newOrderRespType)
      }),
    cancelOrder: (p: CancelOrderParams) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const ref = yield* marketOfRef(registry, p, -2011)
        const cancel = new Cancel({ userId: caller.userId, orderId: ref.orderId, clientOrderId: ref.clientOrderId, onlyIf: restrictionStatus(p.cancelRestrictions) })
        const order = yield* fromEntity(toMarket(ref.market.symbol, { _tag: "Cancel", cancel }, answered("Canceled", (a): OrderState => a.order), () => markets(ref.market.symbol).Cancel(cancel)))
        return canceledOf(order, p.newClientOrderId ?? newClientOrderId(), Date.now())
      }),
    cancelOpenOrders: (p: CancelOpenOrdersParams) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const market = yield* marketOf(registry, p.symbol)
        const cancelAll = new CancelAll({ userId: caller.userId })
        const orders = yield* fromEntity(toMarket(market.symbol, { _tag: "CancelAll", cancelAll }, answered("CanceledAll", (a): ReadonlyArray<OrderState> => a.orders), () => markets(market.symbol).CancelAll(cancelAll)))
        const now = Date.now()
        return orders.map((o) => canceledOf(o, newClientOrderId(), now))
      })
  }
})

export const OrderHandlers = HttpApiBuilder.group(ExchangeApi, "order", (handlers) =>
  Effect.map(orderActions, (act) =>
    handlers
      .handle("newOrder", ({ urlParams }) => act.newOrder(urlParams))
      .handle("cancelOrder", ({ urlParams }) => act.cancelOrder(urlParams))
      .handle("cancelOpenOrders", ({ urlParams }) => act.cancelOpenOrders(urlParams))))
