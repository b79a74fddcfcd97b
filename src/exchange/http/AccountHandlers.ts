// The signed account: addresses and live authorizations, served from the node's read model
// (src/exchange/account/AccountReadModel.ts): no database round trip in steady state, and a grant
// past its expiry is never shown, even in the instant before its timer runs.
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either } from "effect"
import { formatAmount } from "../../chain/units.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { decimalToSats, formatSats } from "../market/amounts.ts"
import { ASSET_DECIMALS } from "../markets/marketSpec.ts"
import { MarketRegistry } from "../markets/MarketRegistry.ts"
import type { Account } from "../../../schemas/exchange/account.ts"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { Caller } from "../../../schemas/exchange/security.ts"
import { validateLedgerAddress } from "../../chain/address.ts"
import { type AccountData, AccountReadModel } from "../account/AccountReadModel.ts"

const fmt = (sats: bigint) => Either.getOrElse(formatAmount(sats < 0n ? 0n : sats, ASSET_DECIMALS), () => "0")

/** An authorized asset's on-chain balance at its delegated address (satoshis), as this node sees it. */
export type FundedOf = (asset: string, delegatedAddress: string) => bigint | undefined

/** Pure: the Binance-shaped account of one user from its read-model data and the on-chain balances. */
export const accountOf = (userId: number, scopes: ReadonlyArray<string>, data: AccountData, now: number, funded: FundedOf = () => undefined): Account => ({
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
  authorizations: data.grants.map((g) => {
    const used = BigInt(g.usedSats)
    const reserved = BigInt(g.reservedSats)
    return {
      asset: g.asset,
      cap: g.cap,
      used: fmt(used),
      reserved: fmt(reserved),
      remaining: fmt(decimalToSats(g.cap) - used - reserved),
      expiresAt: g.expiresAt,
      delegatedAddress: g.delegatedAddress
    }
  }),
  balances: data.grants.map((g) => {
    const reserved = BigInt(g.reservedSats)
    const capFree = decimalToSats(g.cap) - BigInt(g.usedSats) - reserved
    const onChain = funded(g.asset, g.delegatedAddress)
    const fundFree = onChain === undefined ? 0n : onChain - BigInt(g.pendingOutSats) - reserved
    return { asset: g.asset, free: formatSats(capFree < fundFree ? (capFree < 0n ? 0n : capFree) : (fundFree < 0n ? 0n : fundFree)), locked: formatSats(reserved) }
  })
})

/** The account endpoint's work, given the caller: shared by the HttpApi group and the edge's signed lane. */
export const accountAction = Effect.gen(function*() {
  const model = yield* AccountReadModel
  const registry = yield* MarketRegistry
  const view = yield* OmniView
  return () =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const data = yield* model.read(caller.userId)
      const balances = new Map<string, bigint>()
      for (const g of data.grants) {
        const property = registry.propertyOf(g.asset)
        if (property !== undefined) balances.set(g.asset, yield* view.balance(g.delegatedAddress, property))
      }
      return accountOf(caller.userId, caller.scopes, data, Date.now(), (asset) => balances.get(asset))
    })
})

export const AccountHandlers = HttpApiBuilder.group(ExchangeApi, "account", (handlers) =>
  Effect.map(accountAction, (account) => handlers.handle("account", () => account())))
