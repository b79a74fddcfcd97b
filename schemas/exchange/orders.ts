// Signed order endpoints (spec: Order request fields), trade scope. Parameters may come in the
// query, a form body, or both: they are read from exactly the bytes that were signed.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"
import { CancelOrderParams, NewOrderParams } from "./params.ts"
import { prefix } from "./public.ts"
import { SignedTrade, VerifiedParams } from "./security.ts"

/** An order as Binance reports it (RESULT shape); prices and quantities are decimal strings. */
export const Order = Schema.Struct({
  symbol: Schema.String,
  orderId: Schema.String.annotations({ description: "Order identifier (a string, as the spec says)" }),
  orderListId: Schema.Number,
  clientOrderId: Schema.String,
  transactTime: Schema.Number,
  price: Schema.String,
  origQty: Schema.String,
  executedQty: Schema.String,
  cummulativeQuoteQty: Schema.String,
  status: Schema.String,
  timeInForce: Schema.String,
  type: Schema.String,
  side: Schema.String
})

export const OrderGroup = HttpApiGroup.make("order")
  .add(HttpApiEndpoint.post("newOrder", `${prefix}/order`).setUrlParams(NewOrderParams).addSuccess(Order)
    .annotate(Weight, 20)
    .annotate(OpenApi.Summary, "New LIMIT GTC order; matches and settles on-chain inline (SIGNED, trade scope, weight 20)"))
  .add(HttpApiEndpoint.del("cancelOrder", `${prefix}/order`).setUrlParams(CancelOrderParams).addSuccess(Order)
    .annotate(Weight, 4)
    .annotate(OpenApi.Summary, "Cancel an order (SIGNED, trade scope, weight 4)"))
  .middleware(VerifiedParams)
  .middleware(SignedTrade)
  .annotate(OpenApi.Title, "Orders")
