// A person signed in with a wallet is the exchange user that address is registered to; a wallet
// the exchange has not seen gets a new user by signing in (its address registered, no keys yet).
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The user the address belongs to (the oldest, if an address was registered twice), made if none. */
export const userOfAddress = (address: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = yield* sql<{ user_id: string }>`SELECT user_id::text FROM user_addresses WHERE address = ${address} ORDER BY user_addresses.user_id LIMIT 1`
    if (found[0] !== undefined) return Number(found[0].user_id)
    return yield* Effect.gen(function*() {
      // Serialised per address, so two first sign-ins at once make one user.
      yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`user_address:${address}`}))`
      const again = yield* sql<{ user_id: string }>`SELECT user_id::text FROM user_addresses WHERE address = ${address} ORDER BY user_addresses.user_id LIMIT 1`
      if (again[0] !== undefined) return Number(again[0].user_id)
      const userId = Number((yield* sql<{ id: string }>`INSERT INTO users DEFAULT VALUES RETURNING id`)[0]!.id)
      yield* sql`INSERT INTO user_addresses (user_id, address) VALUES (${userId}, ${address})`
      return userId
    }).pipe(sql.withTransaction)
  })

export interface KeyRow {
  readonly api_key: string
  readonly scopes: ReadonlyArray<string>
  readonly ip_allowlist: ReadonlyArray<string>
  readonly label: string | null
  readonly created_at: Date
}

/** The user's live API keys, newest first. */
export const keysOf = (userId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<KeyRow>`SELECT api_key, scopes, ip_allowlist, label, created_at FROM api_keys
      WHERE user_id = ${userId} AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 200`)

export const ownsKey = (userId: number, apiKey: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql`SELECT 1 FROM api_keys WHERE api_key = ${apiKey} AND user_id = ${userId} AND revoked_at IS NULL`, (rows) => rows.length > 0))
