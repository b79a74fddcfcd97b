import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Api } from "../../../schemas/exchange/api.ts"
import type { Account } from "../../../schemas/exchange/endpoints.ts"
import { validateLedgerAddress } from "../../chain/address.ts"
import { verifySigned } from "../auth/SignedRequest.ts"

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
    const addresses = row!.addresses.map((address) => ({ address }))
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
      addresses: addresses.map((a) => {
        const check = validateLedgerAddress(a.address)
        return { address: a.address, type: check.valid ? check.type : "p2pkh" as const }
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

export const AccountHandlers = HttpApiBuilder.group(Api, "account", (handlers) =>
  handlers.handle("account", () =>
    Effect.gen(function*() {
      const { caller } = yield* verifySigned("read")
      return yield* readAccount(caller.userId, caller.scopes)
    })))
