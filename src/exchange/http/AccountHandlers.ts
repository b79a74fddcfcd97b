// The signed account: addresses and live authorizations, served from the node's read model
// (src/exchange/account/AccountReadModel.ts): no database round trip in steady state, and a grant
// past its expiry is never shown, even in the instant before its timer runs.
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { Account } from "../../../schemas/exchange/account.ts"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { Caller } from "../../../schemas/exchange/security.ts"
import { validateLedgerAddress } from "../../chain/address.ts"
import { type AccountData, AccountReadModel } from "../account/AccountReadModel.ts"

/** Pure: the Binance-shaped account of one user from its read-model data. */
export const accountOf = (userId: number, scopes: ReadonlyArray<string>, data: AccountData, now: number): Account => ({
  uid: userId,
  accountType: "SPOT",
  custody: "non-custodial",
  canTrade: scopes.includes("trade") && data.grants.length > 0,
  canWithdraw: false,
  canDeposit: false,
  updateTime: now,
  permissions: ["SPOT"],
  scopes: [...scopes],
  // The version byte decides the type (0x32 addresses start with "M"); stored addresses passed
  // the ledger address rule when they were added.
  addresses: data.addresses.map((address) => {
    const check = validateLedgerAddress(address)
    return { address, type: check.valid ? check.type : "p2pkh" as const }
  }),
  authorizations: data.grants.map((g) => ({ ...g })),
  balances: []
})

export const AccountHandlers = HttpApiBuilder.group(ExchangeApi, "account", (handlers) =>
  Effect.map(AccountReadModel, (model) =>
    handlers.handle("account", () =>
      Effect.flatMap(Caller, (caller) =>
        Effect.map(model.read(caller.userId), (data) => accountOf(caller.userId, caller.scopes, data, Date.now()))))))
