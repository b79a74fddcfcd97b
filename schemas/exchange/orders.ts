// Signed order endpoints (spec: Order request fields). Parameters may come in the query, a form
// body, or both: they are read from exactly the bytes that were signed. Shapes are Binance's
// (ACK, RESULT, FULL; GET /order; myTrades), plus each fill's and trade's on-chain `legs`.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"
import { Leg } from "./market.ts"
import { AllOrdersParams, CancelOpenOrdersParams, CancelOrderParams, MyTradesParams, NewOrderParams, OpenOrdersParams, QueryOrderParams } from "./params.ts"
import { prefix } from "./public.ts"
import { SignedRead, SignedTrade, VerifiedParams } from "./security.ts"

const Dec = Schema.String.annotations({ description: "Decimal string" })
const OrderIdText = Schema.String.annotations({ description: "Order identifier (a string, as the spec says); unique across markets" })

/** What every order shape reports of the order itself, in Binance's field order. */
const orderFields = {
  price: Dec,
  origQty: Dec,
  executedQty: Dec,
  cummulativeQuoteQty: Dec,
  status: Schema.String,
  timeInForce: Schema.String,
  type: Schema.String,
  side: Schema.String
}

export const OrderAck = Schema.Struct({
  symbol: Schema.String,
  orderId: OrderIdText,
  orderListId: Schema.Number,
  clientOrderId: Schema.String,
  transactTime: Schema.Number
})

export const OrderResult = Schema.Struct({
  ...OrderAck.fields,
  ...orderFields,
  workingTime: Schema.Number,
  selfTradePreventionMode: Schema.String
})

export const OrderFill = Schema.Struct({
  price: Dec,
  qty: Dec,
  commission: Dec,
  commissionAsset: Schema.String,
  tradeId: Schema.String,
  legs: Schema.Array(Leg).annotations({ description: "The fill's two on-chain settlement legs" })
})

export const OrderFull = Schema.Struct({ ...OrderResult.fields, fills: Schema.Array(OrderFill) })

/** newOrderRespType decides: FULL (default), RESULT or ACK. */
export const NewOrderResponse = Schema.Union(OrderFull, OrderResult, OrderAck)

export const CanceledOrder = Schema.Struct({
  symbol: Schema.String,
  origClientOrderId: Schema.String,
  orderId: OrderIdText,
  orderListId: Schema.Number,
  clientOrderId: Schema.String,
  transactTime: Schema.Number,
  ...orderFields,
  selfTradePreventionMode: Schema.String
})
export type CanceledOrder = typeof CanceledOrder.Type

/** An order as GET /order, openOrders and allOrders show it. */
export const Order = Schema.Struct({
  symbol: Schema.String,
  orderId: OrderIdText,
  orderListId: Schema.Number,
  clientOrderId: Schema.String,
  ...orderFields,
  stopPrice: Dec,
  icebergQty: Dec,
  time: Schema.Number,
  updateTime: Schema.Number,
  isWorking: Schema.Boolean,
  workingTime: Schema.Number,
  origQuoteOrderQty: Dec,
  selfTradePreventionMode: Schema.String
})
export type Order = typeof Order.Type

export const MyTrade = Schema.Struct({
  symbol: Schema.String,
  id: Schema.String.annotations({ description: "Trade id (unique across markets)" }),
  orderId: OrderIdText,
  orderListId: Schema.Number,
  price: Dec,
  qty: Dec,
  quoteQty: Dec,
  commission: Dec,
  commissionAsset: Schema.String,
  time: Schema.Number,
  isBuyer: Schema.Boolean,
  isMaker: Schema.Boolean,
  isBestMatch: Schema.Boolean,
  legs: Schema.Array(Leg).annotations({ description: "The trade's two on-chain settlement legs with txids and confirmations" })
})
export type MyTrade = typeof MyTrade.Type

export const OrderGroup = HttpApiGroup.make("order")
  .add(HttpApiEndpoint.post("newOrder", `${prefix}/order`).setUrlParams(NewOrderParams).addSuccess(NewOrderResponse)
    .annotate(Weight, 20)
    .annotate(OpenApi.Summary, "New LIMIT GTC order; matches and settles on-chain inline (SIGNED, trade scope, weight 20)"))
  .add(HttpApiEndpoint.del("cancelOrder", `${prefix}/order`).setUrlParams(CancelOrderParams).addSuccess(CanceledOrder)
    .annotate(Weight, 4)
    .annotate(OpenApi.Summary, "Cancel an order by orderId (or symbol + origClientOrderId) (SIGNED, trade scope, weight 4)"))
  .add(HttpApiEndpoint.del("cancelOpenOrders", `${prefix}/openOrders`).setUrlParams(CancelOpenOrdersParams).addSuccess(Schema.Array(CanceledOrder))
    .annotate(Weight, 4)
    .annotate(OpenApi.Summary, "Cancel every open order of the caller on a symbol (SIGNED, trade scope, weight 4)"))
  .middleware(VerifiedParams)
  .middleware(SignedTrade)
  .annotate(OpenApi.Title, "Orders")

export const OrderQueryGroup = HttpApiGroup.make("orderQuery")
  .add(HttpApiEndpoint.get("getOrder", `${prefix}/order`).setUrlParams(QueryOrderParams).addSuccess(Order)
    .annotate(Weight, 4)
    .annotate(OpenApi.Summary, "One order of the caller by orderId (or symbol + origClientOrderId) (SIGNED, weight 4)"))
  .add(HttpApiEndpoint.get("openOrders", `${prefix}/openOrders`).setUrlParams(OpenOrdersParams).addSuccess(Schema.Array(Order))
    .annotate(Weight, 6)
    .annotate(OpenApi.Summary, "Working orders of the caller, on one symbol or all (SIGNED, weight 6)"))
  .add(HttpApiEndpoint.get("allOrders", `${prefix}/allOrders`).setUrlParams(AllOrdersParams).addSuccess(Schema.Array(Order))
    .annotate(Weight, 10)
    .annotate(OpenApi.Summary, "Order history of the caller, oldest first; orderId/startTime/endTime/limit as Binance (SIGNED, weight 10)"))
  .add(HttpApiEndpoint.get("myTrades", `${prefix}/myTrades`).setUrlParams(MyTradesParams).addSuccess(Schema.Array(MyTrade))
    .annotate(Weight, 10)
    .annotate(OpenApi.Summary, "Fills of the caller with their on-chain settlement legs; fromId/orderId/startTime/endTime/limit as Binance (SIGNED, weight 10)"))
  .middleware(VerifiedParams)
  .middleware(SignedRead)
  .annotate(OpenApi.Title, "Order history")
