// How the DeskOrder entity writes its order (the entity is the only writer of its rows; the HTTP
// handler checks the request and sends Create). One transaction: the Idempotency-Key's claim
// first (so concurrent retries with one key wait on its unique index and find the first order),
// then the coupon's use, the order's own deposit address, the row and its `created` event. A
// refusal rolls everything back, so a refused first attempt leaves its key free.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { idempotencyKeyReused } from "../../../schemas/common/ErrorBody.ts"
import type { OrderDraft } from "../../../schemas/desk/orders.ts"
import { idempotencyKeyHours } from "../../platform/http/idempotencyKey.ts"
import { useCoupon } from "../cashout/couponStore.ts"
import { bad, ORDER_WINDOW_MS } from "../cashout/orderInput.ts"
import { DeskWallets } from "../wallets/DeskWallets.ts"
import type { DeskChain } from "../wallets/paths.ts"
import { newShortRef } from "./orderStore.ts"

export interface Idempotency {
  readonly key: string
  readonly fingerprint: string
}

/** What a Create did: wrote order `id`, or found the order it names already written. */
export type Creation = { readonly _tag: "Created" } | { readonly _tag: "Existing"; readonly orderId: string }

/**
 * Claims (API key, key) for order `id`, or answers the order the key names already. Expired keys
 * of this API key go first (a sweep bounded by its own keys): an expired key is free again.
 */
const claimKey = (id: string, keyId: string, claim: Idempotency) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM desk_order_idempotency WHERE key_id = ${keyId}
      AND created_at < now() - make_interval(hours => ${idempotencyKeyHours})`
    const inserted = yield* sql`INSERT INTO desk_order_idempotency (key_id, key, order_id, fingerprint)
      VALUES (${keyId}, ${claim.key}, ${id}, ${claim.fingerprint}) ON CONFLICT (key_id, key) DO NOTHING RETURNING order_id`
    if (inserted.length > 0) return undefined
    const [row] = yield* sql<{ order_id: string; fingerprint: string }>`SELECT order_id::text AS order_id, fingerprint
      FROM desk_order_idempotency WHERE key_id = ${keyId} AND key = ${claim.key}`
    if (row === undefined) return yield* Effect.dieMessage("idempotency key vanished between insert and read")
    if (row.fingerprint !== claim.fingerprint) return yield* Effect.fail(idempotencyKeyReused())
    return row.order_id
  })

/** Writes order `id` from its checked draft; see the module comment. */
export const createOrder = (id: string, draft: OrderDraft, claim: Idempotency | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.gen(function*() {
    const wallets = yield* DeskWallets
    // A redelivered Create (its reply lost in a crash) finds its own order.
    if ((yield* sql`SELECT 1 FROM desk_orders WHERE id = ${id}`).length > 0) return { _tag: "Existing", orderId: id } satisfies Creation as Creation
    if (claim !== null) {
      const named = yield* claimKey(id, draft.keyId, claim)
      if (named !== undefined) return { _tag: "Existing", orderId: named } satisfies Creation as Creation
    }
    if (draft.couponCode !== null && !(yield* useCoupon(draft.couponCode))) {
      return yield* Effect.fail(bad(`couponCode ${draft.couponCode}: the coupon was used up or expired meanwhile`))
    }
    const deposit = yield* wallets.depositAddress({ chain: draft.depositChain as DeskChain, purpose: "order", owner: id, memberId: draft.memberId })
    yield* sql`INSERT INTO desk_orders (id, short_ref, member_id, key_id, kind, status, asset, chain, amount, fee, payout, fee_bps, coupon_code,
        deposit_address, payout_address, refund_address, reference, source, required_confirmations, expires_at, deposit_from_height, deposit_asset)
      VALUES (${id}, ${newShortRef()}, ${draft.memberId}, ${draft.keyId}, ${draft.kind}, 'awaiting_deposit', ${draft.asset}, ${draft.chain},
        ${draft.amount}, ${draft.fee}, ${draft.payout}, ${draft.feeBps}, ${draft.couponCode}, ${deposit.address}, ${draft.payoutAddress},
        ${draft.refundAddress}, ${draft.reference}, ${draft.source}, ${draft.requiredConfirmations},
        now() + ${ORDER_WINDOW_MS} * interval '1 millisecond', ${draft.depositFromHeight}, ${draft.depositAsset})`
    yield* sql`INSERT INTO desk_order_events (order_id, source, event, body)
      VALUES (${id}, 'desk', 'created', ${JSON.stringify({ kind: draft.kind, keyId: draft.keyId })}::jsonb)`
    return { _tag: "Created" } satisfies Creation as Creation
  })))
