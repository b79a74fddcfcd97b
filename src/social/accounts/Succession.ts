// Account succession (docs/social.md, "Succession"): when the Continuity entity stamps CHV1N, the
// account's identity becomes the countdown's new address. The account keeps its key
// (social_accounts.address, its first identity address, which posts, charges, stamps and top-ups
// reference), its #asset id, handle, balance and posts; what moves is identity_address, the
// address the account signs in by and is shown by. The old address no longer reaches it. Every
// succession is a social_successions row: the history lookups show as previousAddresses.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

/** The account (its key) whose current identity is `address`; none for a retired or unknown address. */
export const accountOfIdentity = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ address: string }>`SELECT address FROM social_accounts WHERE COALESCE(identity_address, address) = ${address}`,
      (rows) => Option.fromNullable(rows[0]?.address)))

export interface Identity {
  /** The address the account is known by now. */
  readonly wallet: string
  /** Its earlier identity addresses, oldest first. */
  readonly previousAddresses: ReadonlyArray<string>
}

/** The account's current identity and its earlier ones. */
export const identityOf = (account: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ wallet: string }>`SELECT COALESCE(identity_address, address) AS wallet FROM social_accounts WHERE address = ${account}`
    const history = yield* sql<{ from_address: string }>`SELECT from_address FROM social_successions WHERE account = ${account} ORDER BY at, from_address`
    return { wallet: row?.wallet ?? account, previousAddresses: history.map((h) => h.from_address) } satisfies Identity
  })

/** Whether `address` is, or was, an identity of some account (a succession may not move onto it). */
export const identityTaken = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql`SELECT 1 FROM social_accounts WHERE address = ${address} OR identity_address = ${address}
      UNION ALL SELECT 1 FROM social_successions WHERE from_address = ${address} LIMIT 1`, (rows) => rows.length > 0))

/** CHV1N is on the ledger: the account's identity moves from `from` to `to` (once; a redelivery does nothing). */
export const completeSuccession = (account: string, from: string, to: string, txid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      // Two countdowns may name one address; the first to complete takes it, the other keeps its identity.
      if (yield* identityTaken(to)) {
        yield* Effect.logWarning(`account ${account}: succession to ${to} not applied, that address is already an identity`)
        return false
      }
      const moved = yield* sql`UPDATE social_accounts SET identity_address = ${to}
        WHERE address = ${account} AND COALESCE(identity_address, address) = ${from} RETURNING 1`
      if (moved.length > 0) {
        yield* sql`INSERT INTO social_successions (account, from_address, to_address, txid) VALUES (${account}, ${from}, ${to}, ${txid})
          ON CONFLICT DO NOTHING`
      }
      return moved.length > 0
    }).pipe(sql.withTransaction))
