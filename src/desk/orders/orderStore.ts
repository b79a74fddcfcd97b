// Desk orders in Postgres (desk_orders, migration 0018/0019): the row, its state-machine view,
// reading by uuid or TX- reference, writing a step's outcome with its milestones as order events.
import { randomInt } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { OrderRef } from "../webhooks/partnerWebhook.ts"
import type { DeskOrder, DeskOrderKind, DeskOrderStatus, Milestone } from "./deskOrderState.ts"
import { noRefundAddressReason, refundable } from "./refunds.ts"

export interface OrderRow {
  readonly id: string
  readonly short_ref: string
  readonly member_id: string
  readonly key_id: string
  readonly kind: DeskOrderKind
  readonly status: DeskOrderStatus
  readonly asset: string
  readonly chain: string | null
  readonly amount: string
  readonly fee: string
  readonly payout: string
  readonly fee_bps: number
  readonly deposit_address: string
  readonly payout_address: string | null
  readonly refund_address: string | null
  readonly reference: string | null
  readonly source: string | null
  readonly required_confirmations: number
  readonly expires_at: Date
  readonly deposit_txid: string | null
  readonly deposit_amount: string | null
  readonly deposit_confirmations: number
  readonly burn_txid: string | null
  readonly payout_txid: string | null
  readonly refund_txid: string | null
  readonly failure: string | null
  readonly created_at: Date
  /** The ledger tip when the order was made: its deposit scan starts above it. */
  readonly deposit_from_height: number | null
  /** A mint's stablecoin (USDC, USDT, PYUSD, DAI); null: the deposit is the desk's token `asset`. */
  readonly deposit_asset: string | null
  /** The order's Tick chain ended on purpose (ticks_done_at is set; `endTicks`). */
  readonly ticks_done: boolean
}

const columns = `id::text, short_ref, member_id::text, key_id::text, kind, status, asset, chain, amount::text, fee::text, payout::text,
  fee_bps, deposit_address, payout_address, refund_address, reference, source, required_confirmations, expires_at, deposit_txid,
  deposit_amount::text, deposit_confirmations, burn_txid, payout_txid, refund_txid, failure, created_at, deposit_from_height, deposit_asset,
  ticks_done_at IS NOT NULL AS ticks_done`

/** `TX-` and 8 of 0-9 A-Z: 36^8 ≈ 2.8e12 references; a clash is retried by the unique index. */
export const newShortRef = (): string => {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
  let s = "TX-"
  for (let i = 0; i < 8; i++) s += alphabet[randomInt(alphabet.length)]
  return s
}

export const readOrder = (ref: OrderRef) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      ref._tag === "Uuid"
        ? sql<OrderRow>`SELECT ${sql.literal(columns)} FROM desk_orders WHERE id = ${ref.id}`
        : sql<OrderRow>`SELECT ${sql.literal(columns)} FROM desk_orders WHERE short_ref = ${ref.ref}`,
      (rows) => rows[0]
    ))

/** Orders a member's list shows at most. */
export const memberOrdersMax = 50

/** A member's latest orders across its keys, newest first (the web app's list). */
export const memberOrders = (memberId: string, limit = memberOrdersMax) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<OrderRow>`SELECT ${sql.literal(columns)} FROM desk_orders WHERE member_id = ${memberId} ORDER BY created_at DESC LIMIT ${Math.min(limit, memberOrdersMax)}`)

export interface OrderEventRow {
  readonly order_id: string
  readonly source: string
  readonly event: string
  readonly body: { readonly status?: unknown; readonly txid?: unknown }
  readonly at: Date
}

export interface OrderLegRow {
  readonly order_id: string
  readonly leg: string
  readonly chain: string
  readonly txid: string
  readonly recorded_at: Date
}

/** The recorded events and the signed legs of some orders, oldest first. */
export const orderTrail = (orderIds: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    orderIds.length === 0
      ? Effect.succeed({ events: [] as ReadonlyArray<OrderEventRow>, legs: [] as ReadonlyArray<OrderLegRow> })
      : Effect.all({
        events: sql<OrderEventRow>`SELECT order_id::text AS order_id, source, event, body, at FROM desk_order_events
          WHERE order_id IN ${sql.in([...orderIds])} ORDER BY desk_order_events.id`,
        legs: sql<OrderLegRow>`SELECT order_id::text AS order_id, leg, chain, txid, recorded_at FROM desk_order_legs
          WHERE order_id IN ${sql.in([...orderIds])} ORDER BY recorded_at, leg`
      }))

/** The state machine's view of a row. */
export const machineOf = (r: OrderRow): DeskOrder => ({
  kind: r.kind,
  status: r.status,
  amount: BigInt(r.amount),
  fee: BigInt(r.fee),
  payout: BigInt(r.payout),
  requiredConfirmations: r.required_confirmations,
  expiresAtMs: new Date(r.expires_at).getTime(),
  deposit: r.deposit_txid === null || r.deposit_amount === null
    ? undefined
    : { txid: r.deposit_txid, amount: BigInt(r.deposit_amount), confirmations: r.deposit_confirmations },
  burnTxid: r.burn_txid ?? undefined,
  payoutTxid: r.payout_txid ?? undefined,
  refundTxid: r.refund_txid ?? undefined,
  failure: r.failure ?? undefined,
  refundable: refundable(r.kind, r.refund_address, r.chain),
  noRefundReason: noRefundAddressReason(r.kind)
})

/**
 * Writes a step's outcome when the row is still in the status it was read in (one entity owns
 * the order; the guard keeps a second owner during a shard move from writing over it), with one
 * order event per milestone. False when the row had moved on.
 */
export const writeStep = (id: string, from: DeskOrderStatus, o: DeskOrder, milestones: ReadonlyArray<Milestone>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const updated = yield* sql`UPDATE desk_orders SET status = ${o.status}, deposit_txid = ${o.deposit?.txid ?? null},
          deposit_amount = ${o.deposit?.amount.toString() ?? null}, deposit_confirmations = ${o.deposit?.confirmations ?? 0},
          burn_txid = ${o.burnTxid ?? null}, payout_txid = ${o.payoutTxid ?? null}, refund_txid = ${o.refundTxid ?? null},
          failure = ${o.failure ?? null}, updated_at = now()
        WHERE id = ${id} AND status = ${from} RETURNING id`
      if (updated.length === 0) return false
      for (const m of milestones) {
        yield* sql`INSERT INTO desk_order_events (order_id, source, event, body)
          VALUES (${id}, 'desk', ${m}, ${JSON.stringify({ status: o.status, txid: txidOf(o, m) })}::jsonb)`
      }
      return true
    }).pipe(sql.withTransaction))

/** The order's Tick chain ended on purpose (tickRearm.ts leaves it alone from now on). */
export const endTicks = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE desk_orders SET ticks_done_at = now() WHERE id = ${id} AND ticks_done_at IS NULL`)

/** The txid a milestone is about. */
export const txidOf = (o: DeskOrder, m: Milestone): string =>
  m === "burned" ? o.burnTxid ?? "" : m === "payout_sent" ? o.payoutTxid ?? "" : m === "refund_sent" ? o.refundTxid ?? "" : o.deposit?.txid ?? ""
