// The DeskOrder entity (entity id: the order's uuid), one per desk order. Create writes the order
// (the entity is the only writer of its row and its event log) and starts its timer; PartnerEvent
// appends a partner's webhook event to its log; Watch starts an order written
// before Create existed (kept for messages already stored); Tick is its own durable timer (persisted, delivered at its time, one per
// due time); Advance is what a poll sends so the answer is fresh. Every message runs the same
// idempotent advance over the order's row, so a repeated or replayed message changes nothing.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"
import { BadRequest, IdempotencyKeyReused, ServiceUnavailable } from "../common/ErrorBody.ts"

/** An amount in the smallest unit, as a decimal string (money is never a float). */
const Units = Schema.String.pipe(Schema.pattern(/^[0-9]{1,78}$/))

/**
 * An order checked in full by the HTTP handler (createCashout.ts, createUnwrap.ts): every field
 * of its row but the ones the entity makes (uuid, TX- reference, deposit address, expiry).
 */
export class OrderDraft extends Schema.Class<OrderDraft>("DeskOrder/Draft")({
  kind: Schema.Literal("cashout", "redeem", "mint", "wrap", "unwrap"),
  memberId: Schema.String,
  keyId: Schema.String,
  asset: Schema.String,
  chain: Schema.String,
  /** Where the deposit address is derived: the token ledger, or the order's own chain. */
  depositChain: Schema.String,
  amount: Units,
  fee: Units,
  payout: Units,
  feeBps: Schema.Number,
  /** A coupon that lowers the fee: the entity uses it up with the order, or refuses the order. */
  couponCode: Schema.NullOr(Schema.String),
  payoutAddress: Schema.String,
  refundAddress: Schema.NullOr(Schema.String),
  reference: Schema.NullOr(Schema.String),
  source: Schema.NullOr(Schema.String),
  requiredConfirmations: Schema.Number,
  depositFromHeight: Schema.Number,
  depositAsset: Schema.NullOr(Schema.String)
}) {}

/** The request's Idempotency-Key and its payload's fingerprint (scoped to the draft's API key). */
export const OrderIdempotency = Schema.Struct({ key: Schema.String, fingerprint: Schema.String })

export class CreateOrder extends Schema.Class<CreateOrder>("DeskOrder/Create")({
  draft: OrderDraft,
  idempotency: Schema.NullOr(OrderIdempotency)
}) {
  // One creation per order: a redelivered Create is the same message.
  [PrimaryKey.symbol]() {
    return "create"
  }
}

/** The order the request names: this entity's, or (a replayed Idempotency-Key) the one the key made first. */
export class OrderCreated extends Schema.Class<OrderCreated>("DeskOrder/Created")({
  orderId: Schema.String,
  replayed: Schema.Boolean
}) {}

export class WatchOrder extends Schema.Class<WatchOrder>("DeskOrder/Watch")({}) {
  [PrimaryKey.symbol]() {
    return "watch"
  }
}

export class TickOrder extends Schema.Class<TickOrder>("DeskOrder/Tick")({
  /** When this timer fires (Unix ms). */
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `tick:${this.dueAtMs}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

export class AdvanceOrder extends Schema.Class<AdvanceOrder>("DeskOrder/Advance")({}) {}

/**
 * A partner's webhook event against this order (entity id: the order's uuid; `noOrder` for an
 * event that names no order of the desk's). The entity appends it to the order's event log once:
 * `dedupeKey` (partner and canonical body) makes a partner's retry, or this message run again,
 * record nothing more. Not persisted: the partner retries until it is acknowledged.
 */
export class PartnerEvent extends Schema.Class<PartnerEvent>("DeskOrder/PartnerEvent")({
  partner: Schema.String,
  event: Schema.String,
  /** The webhook's body as JSON text, kept as it came. */
  body: Schema.String,
  dedupeKey: Schema.String
}) {}

/** The event's id in the log when this delivery recorded it; null when an earlier one had. */
export class PartnerEventRecorded extends Schema.Class<PartnerEventRecorded>("DeskOrder/PartnerEventRecorded")({
  eventId: Schema.NullOr(Schema.String)
}) {}

/** The DeskOrder entity that records partner events naming no order of the desk's (it has no row of its own). */
export const noOrder = "no-order"

export const DeskOrderEntity = Entity.make("DeskOrder", [
  Rpc.make("Create", { payload: CreateOrder, success: OrderCreated, error: Schema.Union(BadRequest, IdempotencyKeyReused) })
    .annotate(ClusterSchema.Persisted, true),
  Rpc.make("Watch", { payload: WatchOrder }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Tick", { payload: TickOrder }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("Advance", { payload: AdvanceOrder }).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("PartnerEvent", { payload: PartnerEvent, success: PartnerEventRecorded, error: ServiceUnavailable })
])
