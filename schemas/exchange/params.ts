// Request parameters of the exchange, as schemas: decoded (required fields, patterns, enums) and
// documented in the OpenAPI document from the same values. A refinement's `message` is the legal
// range Binance names in its -1100 text, so a decode failure reads like Binance's.
import { Schema } from "effect"

const legal = (text: string) => ({ message: () => text, description: `legal range: ${text}` })

export const Digits = Schema.String.pipe(Schema.pattern(/^[0-9]{1,20}$/)).annotations(legal("^[0-9]{1,20}$"))
/** A time in Unix milliseconds (16 digits allow microseconds): far below 2^63, so a database
 * comparison never overflows (a 19-digit value once answered -1001). */
export const MillisText = Schema.String.pipe(Schema.pattern(/^[0-9]{1,16}$/)).annotations(legal("^[0-9]{1,16}$"))
export const DecimalText = Schema.String.pipe(Schema.pattern(/^([0-9]{1,20})(\.[0-9]{1,20})?$/))
  .annotations(legal("^([0-9]{1,20})(\\.[0-9]{1,20})?$"))
export const SymbolText = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9]{2,12}([_/-]?[A-Za-z0-9]{2,12})?$/))
  .annotations(legal("^[A-Z0-9_/-]{1,25}$"))
export const ClientOrderId = Schema.String.pipe(Schema.pattern(/^[.A-Z:/a-z0-9_-]{1,36}$/)).annotations(legal("^[\\.A-Z\\:/a-z0-9_-]{1,36}$"))
export const Side = Schema.Literal("BUY", "SELL").annotations(legal("BUY, SELL"))
export const OrderType = Schema.Literal("LIMIT").annotations(legal("LIMIT"))
export const TimeInForce = Schema.Literal("GTC").annotations(legal("GTC"))
export const ResponseType = Schema.Literal("ACK", "RESULT", "FULL").annotations(legal("ACK, RESULT, FULL"))
/** The one self-trade prevention mode the matching engine has (exchangeInfo's allowedSelfTradePreventionModes). */
export const StpMode = Schema.Literal("EXPIRE_MAKER").annotations(legal("EXPIRE_MAKER"))

/** Every signed call carries these; the signature covers the query (without it) followed by the body. */
export const SignedParams = Schema.Struct({
  timestamp: Digits.annotations({ description: "Unix milliseconds (or microseconds)" }),
  recvWindow: Schema.optional(Digits.annotations({ description: "Milliseconds; default 5000, maximum 60000" })),
  signature: Schema.String.pipe(Schema.pattern(/^[0-9a-fA-F]{64}$/)).annotations({
    ...legal("^[0-9a-f]{64}$"),
    description: "Lowercase hex HMAC-SHA256 of the query string without signature, followed by the raw body; the last parameter"
  })
})

export const NewOrderParams = Schema.Struct({
  symbol: SymbolText,
  side: Side,
  type: Schema.optional(OrderType).annotations({ description: "LIMIT (default)" }),
  timeInForce: Schema.optional(TimeInForce).annotations({ description: "GTC (default)" }),
  price: DecimalText,
  quantity: DecimalText,
  newClientOrderId: Schema.optional(ClientOrderId),
  newOrderRespType: Schema.optional(ResponseType),
  selfTradePreventionMode: Schema.optional(StpMode).annotations({ description: "EXPIRE_MAKER (default, and the only mode): another mode is refused, not ignored" }),
  ...SignedParams.fields
})
export type NewOrderParams = typeof NewOrderParams.Type

export const CancelRestriction = Schema.Literal("ONLY_NEW", "ONLY_PARTIALLY_FILLED")

const OrderRef = {
  symbol: Schema.optional(SymbolText).annotations({ description: "Optional with orderId (order ids are unique across markets); required with origClientOrderId" }),
  orderId: Schema.optional(Digits.annotations({ description: "Either orderId or origClientOrderId is required" })),
  origClientOrderId: Schema.optional(ClientOrderId)
}

export const CancelOrderParams = Schema.Struct({
  ...OrderRef,
  newClientOrderId: Schema.optional(ClientOrderId).annotations({ description: "Identifies this cancel; answered as clientOrderId (generated when absent)" }),
  cancelRestrictions: Schema.optional(CancelRestriction).annotations({
    description: "As Binance: ONLY_NEW cancels only an order still NEW, ONLY_PARTIALLY_FILLED only one PARTIALLY_FILLED; otherwise -2011 \"Order was not canceled due to cancel restrictions.\""
  }),
  ...SignedParams.fields
})
export type CancelOrderParams = typeof CancelOrderParams.Type

export const QueryOrderParams = Schema.Struct({ ...OrderRef, ...SignedParams.fields })
export type QueryOrderParams = typeof QueryOrderParams.Type

export const CancelOpenOrdersParams = Schema.Struct({ symbol: SymbolText, ...SignedParams.fields })
export type CancelOpenOrdersParams = typeof CancelOpenOrdersParams.Type

export const OpenOrdersParams = Schema.Struct({ symbol: Schema.optional(SymbolText), ...SignedParams.fields })
export type OpenOrdersParams = typeof OpenOrdersParams.Type

const Paging = {
  startTime: Schema.optional(MillisText.annotations({ description: "Unix milliseconds, inclusive" })),
  endTime: Schema.optional(MillisText.annotations({ description: "Unix milliseconds, inclusive" })),
  limit: Schema.optional(Digits.annotations({ description: "Default 500, maximum 1000" }))
}

export const AllOrdersParams = Schema.Struct({
  symbol: Schema.optional(SymbolText),
  orderId: Schema.optional(Digits.annotations({ description: "Orders with this id and above" })),
  ...Paging,
  ...SignedParams.fields
})
export type AllOrdersParams = typeof AllOrdersParams.Type

export const MyTradesParams = Schema.Struct({
  symbol: Schema.optional(SymbolText),
  orderId: Schema.optional(Digits.annotations({ description: "Only the trades of this order" })),
  fromId: Schema.optional(Digits.annotations({ description: "Trades with this id and above (startTime/endTime are then ignored)" })),
  ...Paging,
  ...SignedParams.fields
})
export type MyTradesParams = typeof MyTradesParams.Type
