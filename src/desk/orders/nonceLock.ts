// Cross-node EVM nonce safety for the desk's recorded sends. The EvmLedger's send lock serialises
// one process only; two nodes paying from the same hot wallet would both read the node's pending
// nonce and sign the same one (the loser's bytes could never be mined and had to be signed again).
// Here the nonce choice, signing and record of a send run inside one Postgres transaction holding
// a transaction-scoped advisory lock keyed by (chain, sender), so every node takes turns, and the
// nonce is
//
//   max(the node's pending nonce, highest nonce recorded in desk_order_legs for that sender + 1)
//
// so a send another node recorded but has not broadcast yet (or the node has not seen yet) is
// never signed over. Mined legs are below the pending nonce anyway, so the max over all recorded
// legs equals the max over those not yet mined. The lock is released at commit, once the leg is
// recorded; the broadcast happens after it (a crash there leaves recorded bytes the order sends
// again). Legs recorded before migration 0021 have no sender and are not counted.
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { NonceGuard } from "../../chain/evm/nonceGuard.ts"

/** The advisory lock's key: one per chain and sending address (hashtext's 32 bits, in the desk's own class). */
const LOCK_CLASS = 0x64736b6e // "dskn"

export const lockKey = (chain: string, sender: string): string => `evm-nonce:${chain}:${sender.toLowerCase()}`

/** The guard for sends recorded in desk_order_legs on `chain`. */
export const legNonceGuard = (sql: SqlClient.SqlClient, chain: string): NonceGuard<SqlError> => ({
  serialize: (sender, self) =>
    sql.withTransaction(Effect.zipRight(
      sql`SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${lockKey(chain, sender)}))`,
      self
    )),
  nonce: (sender, pending) =>
    Effect.map(
      sql<{ readonly n: number | null }>`SELECT max(nonce) AS n FROM desk_order_legs
        WHERE chain = ${chain} AND lower(sender) = ${sender.toLowerCase()} AND nonce IS NOT NULL`,
      (rows) => nextNonce(pending, rows[0]?.n ?? null)
    )
})

/** The nonce to sign with: the node's pending nonce, or past the highest one already recorded. */
export const nextNonce = (pending: number, highestRecorded: number | null): number =>
  highestRecorded === null ? pending : Math.max(pending, highestRecorded + 1)
