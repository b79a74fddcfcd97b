// The decimals an order's amounts are shown in, its ERC-20's read from the chain: a mint's
// stablecoin, a cash-out's or redeem's USDC (`decimals()` of the contract the desk uses on that
// chain, through the cached TokenDecimals port). bsc's USDC has 18, the others 6; the desk never
// assumes either.
import { Effect } from "effect"
import { EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { tokenContractAddress } from "../../chain/evm/tokenAddress.ts"
import type { TokenSymbol } from "../../chain/evm/tokenContracts.ts"
import { TokenDecimals } from "../../chain/evm/TokenDecimals.ts"
import type { EvmChain } from "../../chain/evm/chains.ts"
import { AppConfig } from "../../platform/Config.ts"
import type { OrderRow } from "./orderStore.ts"
import { orderDecimals, orderErc20 } from "./orderView.ts"

/** The decimals of the desk's `symbol` contract on `chain`, as the contract says. */
export const erc20Decimals = (chain: EvmChain, symbol: TokenSymbol) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const ledger = yield* (yield* EvmLedgers).get(chain)
    return yield* (yield* TokenDecimals).of(chain, tokenContractAddress(config.evmTokenContracts, ledger, symbol))
  })

/** Decimals of the order's deposit and payout (orderView.orderDecimals), its ERC-20's from the chain. */
export const orderDecimalsOf = (row: OrderRow) => {
  const token = orderErc20(row)
  return Effect.map(token === undefined ? Effect.succeed(0) : erc20Decimals(token.chain, token.symbol), (d) => orderDecimals(row, d))
}
