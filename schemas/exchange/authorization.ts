// Messages of the Authorization entity (one per user + asset). Persisted: a grant is
// acknowledged only after it is committed; the expiry is a durable self-sent DeliverAt timer.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"

export class GrantRefused extends Schema.TaggedError<GrantRefused>()("GrantRefused", {
  message: Schema.String
}) {}

export class Grant extends Schema.Class<Grant>("Authorization/Grant")({
  grantId: Schema.String,
  cap: Schema.String,
  expiresAtMs: Schema.Number
}) {
  /** Redelivery of the same grant returns the stored reply instead of running again. */
  [PrimaryKey.symbol]() {
    return `grant:${this.grantId}`
  }
}

export const Granted = Schema.Struct({
  grantId: Schema.String,
  asset: Schema.String,
  cap: Schema.String,
  expiresAt: Schema.Number,
  delegatedAddress: Schema.String
})
export type Granted = typeof Granted.Type

export class Expire extends Schema.Class<Expire>("Authorization/Expire")({
  grantId: Schema.String,
  dueAtMs: Schema.Number
}) {
  // One timer per grant: the key is unique per schedule, so dedup never swallows a later one.
  [PrimaryKey.symbol]() {
    return `expire:${this.grantId}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

// Settlement legs are signed by the Authorization entity: it is the one owner of its delegated
// key and of the coins at its delegated address, so legs from one address never race for the
// same coins. Not persisted: the legs themselves are rows (settlement_legs) committed before this
// is sent, and whoever finds a leg unsigned (the Market after its commit, the Settlement entity,
// the expiry) asks again; signing is idempotent (a signed leg answers its stored txid).

export const LegName = Schema.Literal("base", "quote")
export type LegName = typeof LegName.Type

/**
 * What a leg pays, as the Market recorded it in the same batch: sent with the Market's own SignLegs
 * so the wallet builds from it without reading the rows first. The statement that stores the
 * signed bytes takes a row only if it still says exactly this (and is the grant's, unsigned), so
 * terms that disagree with the row are never stored, let alone sent.
 */
export const LegTerms = Schema.Struct({
  propertyId: Schema.Int,
  /** Satoshis, a decimal integer string (never a float). */
  amount: Schema.String.pipe(Schema.pattern(/^[1-9][0-9]{0,29}$/)),
  to: Schema.String
})
export type LegTerms = typeof LegTerms.Type

export const LegRef = Schema.Struct({
  /** Trade id as a decimal string (a BIGINT). */
  tradeId: Schema.String,
  leg: LegName,
  terms: Schema.optional(LegTerms)
})
export type LegRef = typeof LegRef.Type

export class SignLegs extends Schema.Class<SignLegs>("Authorization/SignLegs")({
  grantId: Schema.String,
  legs: Schema.Array(LegRef),
  /**
   * The caller records which legs the ledger took (status 'broadcast') for all of its grants in
   * one statement (the Market after a batch); the wallet then only answers `broadcast` per leg.
   */
  callerRecordsBroadcasts: Schema.optional(Schema.Boolean)
}) {}

export const SignedLeg = Schema.Struct({
  tradeId: Schema.String,
  leg: LegName,
  txid: Schema.String,
  /** The ledger took the leg's bytes in this call (set when the caller records broadcasts). */
  broadcast: Schema.optional(Schema.Boolean)
})
export type SignedLeg = typeof SignedLeg.Type

/** The legs could not be signed now (key gone, no coins for the fee, ledger down); they stay recorded. */
export class LegsRefused extends Schema.TaggedError<LegsRefused>()("LegsRefused", {
  message: Schema.String
}) {}


/** "End now" from the user's web app (the spec's withdrawal): the live grant expires at once, its
 * orders end, and what is left at the delegated address is swept back. One id per request. */
export class EndNow extends Schema.Class<EndNow>("Authorization/EndNow")({
  requestId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `end:${this.requestId}`
  }
}

export const Ended = Schema.Struct({ grantId: Schema.NullOr(Schema.String) })

export const Authorization = Entity.make("Authorization", [
  Rpc.make("Grant", { payload: Grant, success: Granted, error: GrantRefused })
    .annotate(ClusterSchema.Persisted, true),
  Rpc.make("Expire", { payload: Expire })
    .annotate(ClusterSchema.Persisted, true)
    .annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("SignLegs", { payload: SignLegs, success: Schema.Array(SignedLeg), error: LegsRefused }),
  Rpc.make("EndNow", { payload: EndNow, success: Ended })
    .annotate(ClusterSchema.Persisted, true)
    .annotate(ClusterSchema.Uninterruptible, true)
])
