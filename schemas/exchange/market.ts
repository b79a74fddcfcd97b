// Messages of the Market entity, one per symbol (entity id: the symbol, e.g. "SHRDDUSD"). Not
// persisted: an order is carried to the market's owner as a volatile message and acknowledged
// only after the entity's group commit has written it (with its fills and settlement legs); a
// redelivered place is answered from the committed row through its client order id.
import { ClusterSchema, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Schema } from "effect"

export const Side = Schema.Literal("BUY", "SELL")
export const OrderStatus = Schema.Literal("NEW", "PARTIALLY_FILLED", "FILLED", "CANCELED", "REJECTED", "EXPIRED")

/** One on-chain settlement leg of a fill (INTERFACES.md: Settlement legs). */
export const Leg = Schema.Struct({
  asset: Schema.String,
  amount: Schema.String,
  from: Schema.String,
  to: Schema.String,
  /** 64 hex; empty while the leg is recorded but not yet signed. */
  txid: Schema.String,
  confirmations: Schema.Number,
  status: Schema.String
})
export type Leg = typeof Leg.Type

/** An order as the market knows it; decimal strings at the market's precision. */
export const OrderState = Schema.Struct({
  symbol: Schema.String,
  orderId: Schema.String,
  clientOrderId: Schema.String,
  side: Side,
  price: Schema.String,
  origQty: Schema.String,
  executedQty: Schema.String,
  cummulativeQuoteQty: Schema.String,
  status: OrderStatus,
  time: Schema.Number,
  updateTime: Schema.Number
})
export type OrderState = typeof OrderState.Type

export const Fill = Schema.Struct({
  tradeId: Schema.String,
  price: Schema.String,
  qty: Schema.String,
  quoteQty: Schema.String,
  isMaker: Schema.Boolean,
  legs: Schema.Array(Leg)
})
export type Fill = typeof Fill.Type

/** A refusal in the exchange's own codes (-2010, -2011, -2013, -1121, …) and Binance's words. */
export class OrderRefused extends Schema.TaggedError<OrderRefused>()("OrderRefused", {
  code: Schema.Number,
  msg: Schema.String
}) {}

export class Place extends Schema.Class<Place>("Market/Place")({
  userId: Schema.Number,
  clientOrderId: Schema.String,
  side: Side,
  price: Schema.String,
  quantity: Schema.String
}) {}

export const Placed = Schema.Struct({
  order: OrderState,
  fills: Schema.Array(Fill),
  /** True when the client order id was already taken: the answer is that order as it is now. */
  duplicate: Schema.Boolean
})
export type Placed = typeof Placed.Type

export class Cancel extends Schema.Class<Cancel>("Market/Cancel")({
  userId: Schema.Number,
  orderId: Schema.optional(Schema.Number),
  clientOrderId: Schema.optional(Schema.String),
  /** Binance's cancelRestrictions: cancel only an order in this status. */
  onlyIf: Schema.optional(Schema.Literal("NEW", "PARTIALLY_FILLED"))
}) {}

export class CancelAll extends Schema.Class<CancelAll>("Market/CancelAll")({
  userId: Schema.Number
}) {}

/** From the Authorization entity at expiry: every open order funded by this grant ends EXPIRED. */
export class ExpireGrant extends Schema.Class<ExpireGrant>("Market/ExpireGrant")({
  grantId: Schema.String
}) {}

/** Wakes the entity (after `markets add`, or at node start) so its book is in memory. */
export class Activate extends Schema.Class<Activate>("Market/Activate")({}) {}

/**
 * Orders for a market another node owns, gathered over one event-loop turn and carried as one
 * message (issue 22.2): each command answered on its own, in order, as the single calls would be.
 */
export const BatchCommand = Schema.Union(
  Schema.TaggedStruct("Place", { place: Place }),
  Schema.TaggedStruct("Cancel", { cancel: Cancel }),
  Schema.TaggedStruct("CancelAll", { cancelAll: CancelAll })
)
export type BatchCommand = typeof BatchCommand.Type

export class Batch extends Schema.Class<Batch>("Market/Batch")({
  commands: Schema.Array(BatchCommand)
}) {}

export const BatchAnswer = Schema.Union(
  Schema.TaggedStruct("Placed", { placed: Placed }),
  Schema.TaggedStruct("Canceled", { order: OrderState }),
  Schema.TaggedStruct("CanceledAll", { orders: Schema.Array(OrderState) }),
  Schema.TaggedStruct("Refused", { code: Schema.Number, msg: Schema.String })
)
export type BatchAnswer = typeof BatchAnswer.Type

export const Market = Entity.make("Market", [
  Rpc.make("Place", { payload: Place, success: Placed, error: OrderRefused }),
  Rpc.make("Cancel", { payload: Cancel, success: OrderState, error: OrderRefused }),
  Rpc.make("CancelAll", { payload: CancelAll, success: Schema.Array(OrderState), error: OrderRefused }),
  Rpc.make("Batch", { payload: Batch, success: Schema.Array(BatchAnswer) }),
  Rpc.make("ExpireGrant", { payload: ExpireGrant, success: Schema.Number, error: OrderRefused }),
  Rpc.make("Activate", { payload: Activate })
]).annotateRpcs(ClusterSchema.Persisted, false)
