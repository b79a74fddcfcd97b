// A desk member reached by a wallet address (issue 24; migration 0034): the member whose linked
// wallet signs with that address, else the member that address signed in as. A wallet without an
// account gets one by signing in: a new member named by its address.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

interface MemberRow {
  readonly id: string
  readonly fee_bps: number | null
}

/** The member `address` stands for, if any: its linked wallet first, then its sign-in address. */
export const memberOfAddress = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<MemberRow & { rank: number }>`
      SELECT m.id::text AS id, m.fee_bps, 0 AS rank FROM desk_wallets w JOIN desk_members m ON m.id = w.member_id WHERE w.signing_address = ${address}
      UNION ALL
      SELECT id::text AS id, fee_bps, 1 AS rank FROM desk_members WHERE account_address = ${address}
      ORDER BY rank LIMIT 1`.pipe(Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(({ id, fee_bps }): MemberRow => ({ id, fee_bps }))))))

/** The member of `address`, made the first time that address signs in. */
export const ensureMemberOf = (address: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = yield* memberOfAddress(address)
    if (Option.isSome(found)) return found.value
    // Two first sign-ins at once: the unique account_address keeps one member; both read it back.
    yield* sql`INSERT INTO desk_members (account_address) VALUES (${address}) ON CONFLICT (account_address) DO NOTHING`
    const made = yield* memberOfAddress(address)
    return Option.isSome(made) ? made.value : yield* Effect.dieMessage(`desk member of ${address} not found after it was made`)
  })
