// On coin devnets (BTC, LTC: SHARDLINE_BTC_RPC_URL / _LTC_RPC_URL unset) the desk's hot vault
// is topped up from the devnet faucet when an unwrap payout finds it short, so unwraps pay out
// of the box with `npm start`. The faucet pays the shortfall plus TOP_UP_MARGIN_SATS in one
// payment, spendable from the chain's next block (the devnet clock's, or `devnet mine`); until
// then the payout waits. Topping up on demand rather than at start keeps the reserves the wrap
// desk publishes (which count the vaults) from carrying a devnet float. On a real node nothing
// is paid: the operator funds the hot vault, and a short payout waits with a warning.
import { Effect } from "effect"
import type { CoinChain } from "../../chain/params.ts"
import type { UtxoLedgerShape } from "../../chain/ledger/UtxoLedger.ts"
import { formatAmount } from "../../chain/units.ts"
import type { AppConfigShape } from "../../platform/Config.ts"
import type { DevnetChainsShape } from "../../platform/devnet/DevnetChains.ts"
import { realNodeSetting } from "../../platform/devnet/realNode.ts"

/** Paid on top of the shortfall: the network fee and room for the next small payouts (0.01 coin). */
export const TOP_UP_MARGIN_SATS = 1_000_000n

/**
 * A top-up for one chain's hot vault, or undefined on a real node. It pays at most once per
 * block of that chain: a top-up waiting for its block is not paid again.
 */
export const devnetTopUp = (config: AppConfigShape, chains: DevnetChainsShape, chain: CoinChain, coin: UtxoLedgerShape) => {
  if (realNodeSetting(config, chain) !== undefined) return undefined
  let paidAtHeight = -1
  return (vault: string, shortfall: bigint) =>
    Effect.gen(function*() {
      const tip = yield* coin.tip
      if (tip.height <= paidAtHeight) return
      const amount = yield* formatAmount(shortfall + TOP_UP_MARGIN_SATS, 8)
      const txid = yield* chains.pay(chain, vault, amount, undefined)
      paidAtHeight = tip.height
      yield* Effect.logInfo(`desk: the ${chain} devnet faucet paid the hot vault ${vault} ${amount} for unwrap payouts (${txid}); spendable from the next block`)
    }).pipe(Effect.catchAll((e) => Effect.logWarning(`desk: the ${chain} devnet hot vault was not topped up: ${e.message}`)))
}
