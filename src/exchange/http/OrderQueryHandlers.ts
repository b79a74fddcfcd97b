// Order history endpoints, read scope: the caller's own orders and trades from the tables the
// Market entities write. Another user's order id is answered as unknown (-2013), like an id that
// does not exist, so existence is not disclosed.
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { apiError, unavailable } from "../../../schemas/exchange/errors.ts"
import type { AllOrdersParams, MyTradesParams, OpenOrdersParams, QueryOrderParams } from "../../../schemas/exchange/params.ts"
import { Caller } from "../../../schemas/exchange/security.ts"
import { parseId } from "../markets/ids.ts"
import { MarketRegistry } from "../markets/MarketRegistry.ts"
import * as Q from "../orders/orderQueries.ts"
import { myTradeOf, orderOf } from "./orderBodies.ts"
import { marketOf, marketOfRef } from "./OrderHandlers.ts"

const noSuchOrder = () => apiError(-2013, "Order does not exist.")
/** A database hiccup on a read is a retryable 503, never a 500. */

const numberOr = (text: string | undefined): number | undefined => (text === undefined ? undefined : Number(text))
const limitOf = (text: string | undefined) => Math.max(1, Math.min(Q.limitMax, numberOr(text) ?? Q.limitDefault))

/** The order-history endpoints' work, given the caller: shared by the HttpApi group and the edge's signed lane. */
export const orderQueryActions = Effect.gen(function*() {
  const registry = yield* MarketRegistry
  const sql = yield* SqlClient.SqlClient
  const read = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.mapError(() => unavailable()))
  const marketOfRow = (orderId: string) => {
    const m = registry.ofId(Number(orderId))
    return m === undefined ? Effect.fail(noSuchOrder()) : Effect.succeed(m)
  }
  const optionalMarket = (symbol: string | undefined) => (symbol === undefined ? Effect.succeed(undefined) : marketOf(registry, symbol))

  return {
    getOrder: (p: QueryOrderParams) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const ref = yield* marketOfRef(registry, p, -2013)
        const row = ref.orderId !== undefined
          ? yield* read(Q.orderById(caller.userId, ref.orderId))
          : yield* read(Q.orderByClientId(caller.userId, ref.market.id, ref.clientOrderId!))
        if (row === undefined) return yield* Effect.fail(noSuchOrder())
        return orderOf(yield* marketOfRow(row.order_id), row)
      }),
    openOrders: (p: OpenOrdersParams) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const market = yield* optionalMarket(p.symbol)
        const rows = yield* read(Q.openOrders(caller.userId, market?.id))
        return yield* Effect.forEach(rows, (r) => Effect.map(marketOfRow(r.order_id), (m) => orderOf(m, r)))
      }),
    allOrders: (p: AllOrdersParams) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const market = yield* optionalMarket(p.symbol)
        const fromId = p.orderId === undefined ? undefined : parseId(p.orderId) ?? 0
        const rows = yield* read(Q.allOrders(caller.userId, market?.id, {
          fromId,
          startTime: numberOr(p.startTime),
          endTime: numberOr(p.endTime),
          limit: limitOf(p.limit)
        }))
        return yield* Effect.forEach(rows, (r) => Effect.map(marketOfRow(r.order_id), (m) => orderOf(m, r)))
      }),
    myTrades: (p: MyTradesParams) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const market = yield* optionalMarket(p.symbol)
        const { legs, trades } = yield* read(Q.myTrades(caller.userId, market?.id, p.orderId === undefined ? undefined : parseId(p.orderId) ?? 0, {
          fromId: p.fromId === undefined ? undefined : parseId(p.fromId) ?? 0,
          startTime: numberOr(p.startTime),
          endTime: numberOr(p.endTime),
          limit: limitOf(p.limit)
        }))
        return yield* Effect.forEach(trades, (t) => Effect.map(marketOfRow(t.trade_id), (m) => myTradeOf(m, caller.userId, t, legs)))
      })
  }
})

export const OrderQueryHandlers = HttpApiBuilder.group(ExchangeApi, "orderQuery", (handlers) =>
  Effect.map(orderQueryActions, (act) =>
    handlers
      .handle("getOrder", ({ urlParams }) => act.getOrder(urlParams))
      .handle("openOrders", ({ urlParams }) => act.openOrders(urlParams))
      .handle("allOrders", ({ urlParams }) => act.allOrders(urlParams))
      .handle("myTrades", ({ urlParams }) => act.myTrades(urlParams))))
