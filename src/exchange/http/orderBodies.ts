// Pure: orders, fills and trades as Binance shows them, from the Market entity's answers and from
// the history tables. Commission is "0": the exchange takes none (the chain fees of settlement are
// paid by the system's fee sponsor, docs/exchange.md).
import type { CanceledOrder, MyTrade, Order } from "../../../schemas/exchange/orders.ts"
import type { Leg, OrderState, Placed } from "../../../schemas/exchange/market.ts"
import type { Market } from "../markets/marketSpec.ts"
import { formatPrice, formatQty, formatSats } from "../market/amounts.ts"
import type { LegRow, OrderRow, TradeRow } from "../orders/orderQueries.ts"

export const stpMode = "EXPIRE_MAKER"
const OPEN = new Set(["NEW", "PARTIALLY_FILLED"])

/** What the taker receives is what Binance would charge commission in. */
const commissionAsset = (m: Market, side: string) => (side === "BUY" ? m.base : m.quote)

// The response bodies below are written out field by field rather than spread from one another:
// the order answers are built for every POST and DELETE /order, and the spreads were 4 % of the
// node's allocations in the orders bench (session 27's heap profile). Fields in Binance's order.

export const ackOf = (o: OrderState) => ({
  symbol: o.symbol,
  orderId: o.orderId,
  orderListId: -1,
  clientOrderId: o.clientOrderId,
  transactTime: o.time
})

/** RESULT: the ack's fields, the order's own (LIMIT GTC only), its working time and STP mode. */
export const resultOf = (o: OrderState) => ({
  symbol: o.symbol,
  orderId: o.orderId,
  orderListId: -1,
  clientOrderId: o.clientOrderId,
  transactTime: o.time,
  price: o.price,
  origQty: o.origQty,
  executedQty: o.executedQty,
  cummulativeQuoteQty: o.cummulativeQuoteQty,
  status: o.status,
  timeInForce: "GTC",
  type: "LIMIT",
  side: o.side,
  workingTime: o.time,
  selfTradePreventionMode: stpMode
})

/** FULL: RESULT with the fills. */
export const fullOf = (m: Market, p: Placed) => {
  const asset = commissionAsset(m, p.order.side)
  return Object.assign(resultOf(p.order), {
    fills: p.fills.map((f) => ({ price: f.price, qty: f.qty, commission: "0", commissionAsset: asset, tradeId: f.tradeId, legs: f.legs }))
  })
}

export const newOrderBody = (m: Market, p: Placed, respType: "ACK" | "RESULT" | "FULL" | undefined) =>
  respType === "ACK" ? ackOf(p.order) : respType === "RESULT" ? resultOf(p.order) : fullOf(m, p)

export const canceledOf = (o: OrderState, cancelClientId: string, now: number): CanceledOrder => ({
  symbol: o.symbol,
  origClientOrderId: o.clientOrderId,
  orderId: o.orderId,
  orderListId: -1,
  clientOrderId: cancelClientId,
  transactTime: now,
  price: o.price,
  origQty: o.origQty,
  executedQty: o.executedQty,
  cummulativeQuoteQty: o.cummulativeQuoteQty,
  status: o.status,
  timeInForce: "GTC",
  type: "LIMIT",
  side: o.side,
  selfTradePreventionMode: stpMode
})

export const orderOf = (m: Market, r: OrderRow): Order => ({
  symbol: m.symbol,
  orderId: r.order_id,
  orderListId: -1,
  clientOrderId: r.client_order_id,
  price: formatPrice(m.compiled, Number(r.price_ticks)),
  origQty: formatQty(m.compiled, Number(r.qty_lots)),
  executedQty: formatQty(m.compiled, Number(r.executed_lots)),
  cummulativeQuoteQty: formatSats(BigInt(r.quote_executed)),
  status: r.status,
  timeInForce: "GTC",
  type: "LIMIT",
  side: r.side,
  stopPrice: "0.00000000",
  icebergQty: "0.00000000",
  time: Number(r.created_ms),
  updateTime: Number(r.updated_ms),
  isWorking: OPEN.has(r.status),
  workingTime: Number(r.created_ms),
  origQuoteOrderQty: "0.00000000",
  selfTradePreventionMode: stpMode
})

export const legOf = (l: LegRow): Leg => ({
  asset: l.asset,
  amount: formatSats(BigInt(l.amount)),
  from: l.from_address,
  to: l.to_address,
  txid: l.txid ?? "",
  confirmations: l.confirmations,
  status: l.status
})

export const myTradeOf = (m: Market, userId: number, t: TradeRow, legs: ReadonlyArray<LegRow>): MyTrade => {
  const isBuyer = Number(t.buyer_user) === userId
  const isMaker = isBuyer === t.buyer_is_maker
  return {
    symbol: m.symbol,
    id: t.trade_id,
    orderId: isMaker ? t.maker_order_id : t.taker_order_id,
    orderListId: -1,
    price: formatPrice(m.compiled, Number(t.price_ticks)),
    qty: formatQty(m.compiled, Number(t.qty_lots)),
    quoteQty: formatSats(BigInt(t.quote_qty)),
    commission: "0",
    commissionAsset: isBuyer ? m.base : m.quote,
    time: Number(t.time_ms),
    isBuyer,
    isMaker,
    isBestMatch: true,
    legs: legs.filter((l) => l.trade_id === t.trade_id).map(legOf)
  }
}
