// A faucet for a coin chain (BTC, LTC): what pays a service's hot wallet when it runs short, on a
// chain that has one. A devnet has one (src/platform/devnet/coinFaucets.ts, given when that chain
// is a devnet); a real node has none, and the operator funds the wallet. Service code asks this
// port, never whether it runs on a devnet.
import { Context, type Effect } from "effect"
import type { DevnetRefused } from "../../../schemas/devnet.ts"
import type { CoinChain } from "../../chain/params.ts"

/** Pays `sats` of the chain's coin to `to`; the txid. */
export type CoinFaucet = (to: string, sats: bigint) => Effect.Effect<string, DevnetRefused>

export interface CoinFaucetsShape {
  /** The chain's faucet, or undefined when the chain has none (a real node). */
  readonly faucet: (chain: CoinChain) => CoinFaucet | undefined
}

export class CoinFaucets extends Context.Tag("shardline/CoinFaucets")<CoinFaucets, CoinFaucetsShape>() {}
