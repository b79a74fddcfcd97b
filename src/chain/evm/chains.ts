// The EVM chains we pay out on and watch for deposits, as data. Chain ids are fixed: a node
// that reports another id is refused when a ledger is built.
import { Schema } from "effect"
import { defineChain, type Chain } from "viem"

export const EvmChainName = Schema.Literal("ethereum", "base", "bsc")
export type EvmChain = typeof EvmChainName.Type

export interface EvmChainParams {
  readonly chain: EvmChain
  readonly chainId: number
  readonly name: string
  readonly nativeCurrency: { readonly name: string; readonly symbol: string; readonly decimals: number }
  /** Typical seconds between blocks; the devnet spaces its block timestamps by this. */
  readonly blockTimeSeconds: number
}

export const evmChains: { readonly [C in EvmChain]: EvmChainParams & { readonly chain: C } } = {
  ethereum: { chain: "ethereum", chainId: 1, name: "Ethereum", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, blockTimeSeconds: 12 },
  base: { chain: "base", chainId: 8453, name: "Base", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, blockTimeSeconds: 2 },
  bsc: { chain: "bsc", chainId: 56, name: "BNB Smart Chain", nativeCurrency: { name: "BNB", symbol: "BNB", decimals: 18 }, blockTimeSeconds: 3 }
}

export const evmChainNames: ReadonlyArray<EvmChain> = ["ethereum", "base", "bsc"]

/** A viem chain for `chain` whose only RPC endpoint is `rpcUrl` (our node, anvil, or a provider). */
export const viemChain = (chain: EvmChain, rpcUrl: string): Chain => {
  const p = evmChains[chain]
  return defineChain({
    id: p.chainId,
    name: p.name,
    nativeCurrency: p.nativeCurrency,
    rpcUrls: { default: { http: [rpcUrl] } }
  })
}
