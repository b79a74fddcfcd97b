// The dollar ERC-20s every EVM devnet has from its first blocks: USDC, USDT, PYUSD and DAI with
// their mainnet decimals (6, 6, 6, 18; bsc's Binance-Peg USDC has 18). The hot wallet deploys
// them first, in this order, from nonce 0, then mints each a supply to itself: so a token's
// address is a function of the hot wallet's address alone, the same in every process that
// knows the hot wallet (the node, its CLI) without a registry.
import { Effect } from "effect"
import { getContractAddress, type Address } from "viem"
import type { EvmChain } from "./chains.ts"
import type { EvmLedger } from "./EvmLedger.ts"
import { deployMockUsdc, mintMockUsdc, type TokenSpec } from "./MockUsdc.ts"

export const devnetTokenSymbols = ["USDC", "USDT", "PYUSD", "DAI"] as const
export type DevnetTokenSymbol = (typeof devnetTokenSymbols)[number]

const names: Record<DevnetTokenSymbol, string> = { USDC: "USD Coin", USDT: "Tether USD", PYUSD: "PayPal USD", DAI: "Dai Stablecoin" }

/** Mainnet decimals of each token on each chain. */
export const devnetTokenDecimals = (chain: EvmChain, symbol: DevnetTokenSymbol): number =>
  symbol === "DAI" || (chain === "bsc" && symbol === "USDC") ? 18 : 6

/** Whole tokens minted to the hot wallet at start: the devnet's float for payments. */
export const devnetTokenSupplyWhole = 1_000_000_000n

export const devnetTokenSpecs = (chain: EvmChain): ReadonlyArray<TokenSpec & { readonly symbol: DevnetTokenSymbol }> =>
  devnetTokenSymbols.map((symbol) => ({ symbol, name: names[symbol], decimals: devnetTokenDecimals(chain, symbol) }))

export const isDevnetTokenSymbol = (s: string): s is DevnetTokenSymbol => (devnetTokenSymbols as ReadonlyArray<string>).includes(s)

/** Where the devnet deployed `symbol`: the hot wallet's contract at nonce = the symbol's position. */
export const devnetTokenAddress = (hotWallet: Address, symbol: DevnetTokenSymbol): Address =>
  getContractAddress({ from: hotWallet, nonce: BigInt(devnetTokenSymbols.indexOf(symbol)) })

/**
 * Deploys the four tokens from a fresh hot wallet (nonces 0..3), then mints the supply of each
 * to it. A hot wallet that has already sent a transaction would put them elsewhere: refused.
 */
export const deployDevnetTokens = (ledger: EvmLedger) =>
  Effect.gen(function*() {
    const specs = devnetTokenSpecs(ledger.chain)
    for (const spec of specs) {
      const address = yield* deployMockUsdc(ledger, spec)
      const expected = devnetTokenAddress(ledger.hotWallet, spec.symbol)
      if (address.toLowerCase() !== expected.toLowerCase()) {
        return yield* Effect.dieMessage(`devnet ${spec.symbol} on ${ledger.chain} deployed at ${address}, not ${expected}: the hot wallet was not fresh`)
      }
    }
    for (const spec of specs) {
      yield* mintMockUsdc(ledger, devnetTokenAddress(ledger.hotWallet, spec.symbol), ledger.hotWallet, devnetTokenSupplyWhole * 10n ** BigInt(spec.decimals))
    }
  })
