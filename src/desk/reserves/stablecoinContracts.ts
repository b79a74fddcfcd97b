// Which ERC-20 contracts the reserves scan reads as dollar stablecoins on each EVM chain, pure.
// On a devnet: the devnet's own USDC, USDT, PYUSD and DAI (their addresses follow from the hot
// wallet). On a real node: SHARDLINE_DESK_STABLECOINS, `chain:SYMBOL=0x…` entries joined by
// commas. Decimals are never configured: the scan reads decimals() from each contract.
import { Either } from "effect"
import type { EvmChain } from "../../chain/evm/chains.ts"
import { type Stablecoin, stablecoins } from "./reserves.ts"

export interface StablecoinContract {
  readonly chain: EvmChain
  readonly symbol: Stablecoin
  readonly address: string
}

const evmChainSet: ReadonlyArray<string> = ["ethereum", "base", "bsc"]

export const parseStablecoinContracts = (text: string): Either.Either<ReadonlyArray<StablecoinContract>, string> => {
  const out: Array<StablecoinContract> = []
  for (const [i, entry] of text.split(",").map((e) => e.trim()).filter((e) => e !== "").entries()) {
    const m = /^([a-z]+):([A-Z]+)=(0x[0-9a-fA-F]{40})$/.exec(entry)
    if (m === null) return Either.left(`entry ${i + 1} is not chain:SYMBOL=0x… (40 hex digits)`)
    const [, chain, symbol, address] = m
    if (!evmChainSet.includes(chain!)) return Either.left(`entry ${i + 1}: unknown chain "${chain}" (ethereum, base, bsc)`)
    if (!(stablecoins as ReadonlyArray<string>).includes(symbol!)) return Either.left(`entry ${i + 1}: ${symbol} is not one of ${stablecoins.join(", ")}`)
    if (out.some((c) => c.chain === chain && c.symbol === symbol)) return Either.left(`${chain}:${symbol} is listed twice`)
    out.push({ chain: chain as EvmChain, symbol: symbol as Stablecoin, address: address! })
  }
  return Either.right(out)
}
