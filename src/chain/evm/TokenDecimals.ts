// An ERC-20's decimals as its contract says (`decimals()`, read through the EVM ledger port),
// cached per (chain, contract): a token's decimals never change, and an order view or a quote
// must not cost an RPC round trip each time. The same code serves a devnet, anvil and a real
// node: nothing here knows which (bsc's Binance-Peg USDC answers 18, the others 6).
import { Context, Effect, Layer } from "effect"
import type { EvmChain, EvmCallFailed, EvmInvalidInput, EvmLedgersShape, EvmRpcError, EvmUnsupported } from "./EvmLedger.ts"
import { EvmLedgers } from "./EvmLedger.ts"

export interface TokenDecimalsShape {
  /** The decimals of the ERC-20 at `contract` on `chain`; read once, then from memory. */
  readonly of: (chain: EvmChain, contract: string) => Effect.Effect<number, EvmUnsupported | EvmInvalidInput | EvmCallFailed | EvmRpcError>
}

export class TokenDecimals extends Context.Tag("shardline/TokenDecimals")<TokenDecimals, TokenDecimalsShape>() {}

/**
 * The cache over `ledgers`. Only answers are kept (a failed read is read again next time); two
 * first reads at the same moment may both ask the contract, and agree.
 */
export const makeTokenDecimals = (ledgers: EvmLedgersShape): TokenDecimalsShape => {
  const known = new Map<string, number>()
  return {
    of: (chain, contract) =>
      Effect.suspend(() => {
        const key = `${chain}:${contract.toLowerCase()}`
        const hit = known.get(key)
        if (hit !== undefined) return Effect.succeed(hit)
        return ledgers.get(chain).pipe(
          Effect.flatMap((ledger) => ledger.tokenDecimals(contract)),
          Effect.tap((decimals) => Effect.sync(() => known.set(key, decimals)))
        )
      })
  }
}

/** The cache over the node's EVM ledgers. */
export const layer: Layer.Layer<TokenDecimals, never, EvmLedgers> = Layer.effect(TokenDecimals, Effect.map(EvmLedgers, makeTokenDecimals))
