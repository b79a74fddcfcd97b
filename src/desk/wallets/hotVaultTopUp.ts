// Where the chain has a faucet (a BTC or LTC devnet: SHARDLINE_BTC_RPC_URL / _LTC_RPC_URL unset;
// the CoinFaucets port), the desk's hot vault is topped up from it when an unwrap payout finds it
// short, so unwraps pay out of the box with `npm start`. The faucet pays the shortfall plus
// TOP_UP_MARGIN_SATS in one payment, spendable from the chain's next block (the devnet clock's,
// or `devnet mine`); until then the payout waits. Topping up on demand rather than at start keeps
// the reserves the wrap desk publishes (which count the vaults) from carrying a devnet float. A
// real node has no faucet: the operator funds the hot vault, and a short payout waits with a warning.
import { Effect } from "effect"
import type { CoinChain } from "../../chain/params.ts"
import type { UtxoLedgerShape } from "../../chain/ledger/UtxoLedger.ts"
import type { CoinFaucetsShape } from "../../platform/ledger/CoinFaucets.ts"

/** Paid on top of the shortfall: the network fee and room for the next small payouts (0.01 coin). */
export const TOP_UP_MARGIN_SATS = 1_000_000n

/**
 * A top-up for one chain's hot vault, or undefined when the chain has no faucet. It pays at most
 * once per block of that chain: a top-up waiting for its block is not paid again.
 */
export const hotVaultTopUp = (faucets: CoinFaucetsShape, chain: CoinChain, coin: UtxoLedgerShape) => {
  const faucet = faucets.faucet(chain)
  if (faucet === undefined) return undefined
  let paidAtHeight = -1
  return (vault: string, shortfall: bigint) =>
    Effect.gen(function*() {
      const tip = yield* coin.tip
      if (tip.height <= paidAtHeight) return
      const sats = shortfall + TOP_UP_MARGIN_SATS
      const txid = yield* faucet(vault, sats)
      paidAtHeight = tip.height
      yield* Effect.logInfo(`desk: the ${chain} faucet paid the hot vault ${vault} ${sats} sat for unwrap payouts (${txid}); spendable from the next block`)
    }).pipe(Effect.catchAll((e) => Effect.logWarning(`desk: the ${chain} hot vault was not topped up: ${e.message}`)))
}
