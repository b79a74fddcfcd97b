import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Account } from "../../../schemas/exchange/account.ts"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { Caller } from "../../../schemas/exchange/security.ts"
import { validateLedgerAddress } from "../../chain/address.ts"

/** Reads are served from the entity's committed rows; an expired grant is never shown, even
 * in the instant between its due time and its timer running. */
const readAccount = (userId: number, scopes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // One round trip: addresses and live grants as two JSON arrays.
    const [row] = yield* sql<{ addresses: Array<string>; grants: Array<{ asset: string; cap: string; used: string; expires_at: string; delegated_address: string }> }>`
      SELECT
        (SELECT coalesce(json_agg(address ORDER BY created_at, address), '[]') FROM user_addresses WHERE user_id = ${userId}) AS addresses,
        (SELECT coalesce(json_agg(json_build_object('asset', asset, 'cap', cap::text, 'used', used::text,
            'expires_at', (extract(epoch FROM expires_at) * 1000)::bigint::text, 'delegated_address', delegated_address) ORDER BY asset), '[]')
         FROM authorizations WHERE user_id = ${userId} AND expires_at > now()) AS grants`
    const grants = row!.grants
    const account: Account = {
      uid: userId,
      accountType: "SPOT",
      custody: "non-custodial",
      canTrade: scopes.includes("trade") && grants.length > 0,
      canWithdraw: false,
      canDeposit: false,
      updateTime: Date.now(),
      permissions: ["SPOT"],
      scopes: [...scopes],
      // The version byte decides the type (0x32 addresses start with "M"); stored addresses
      // passed the ledger address rule when they were added.
      addresses: row!.addresses.map((address) => {
        const check = validateLedgerAddress(address)
        return { address, type: check.valid ? check.type : "p2pkh" as const }
      }),
      authorizations: grants.map((g) => ({
        asset: g.asset,
        cap: g.cap,
        used: g.used,
        expiresAt: Number(g.expires_at),
        delegatedAddress: g.delegated_address
      })),
      balances: []
    }
    return account
  }).pipe(Effect.orDie)

export const AccountHandlers = HttpApiBuilder.group(ExchangeApi, "account", (handlers) =>
  Effect.map(SqlClient.SqlClient, (sql) =>
    handlers.handle("account", () =>
      Effect.flatMap(Caller, (caller) => readAccount(caller.userId, caller.scopes)).pipe(
        Effect.provideService(SqlClient.SqlClient, sql)
      ))))
