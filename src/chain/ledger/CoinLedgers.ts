// The wrap desk's coin chains (BTC, LTC) as `UtxoLedger` instances, one per chain, each with its
// own regtest params (params.ts `coinChains`): an in-process devnet by default, or a
// bitcoind-compatible node (SHARDLINE_BTC_RPC_URL, SHARDLINE_LTC_RPC_URL). Addresses cross these
// ledgers in the chain's own format (bcrt/regtest "m…"/"n…" for BTC, litecoind regtest for LTC),
// never the token ledger's. Built in src/platform/ChainsLive.ts.
import { Context } from "effect"
import type { CoinChain } from "../params.ts"
import type { UtxoLedgerShape } from "./UtxoLedger.ts"

export interface CoinLedgersShape {
  readonly chains: ReadonlyArray<CoinChain>
  readonly get: (chain: CoinChain) => UtxoLedgerShape
}

export class CoinLedgers extends Context.Tag("shardline/CoinLedgers")<CoinLedgers, CoinLedgersShape>() {}
