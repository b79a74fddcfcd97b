// Where each dollar ERC-20 the desk pays, takes and counts lives on each EVM chain: the one place
// the desk's USDC payouts, mint deposit scans, mint refunds and reserves scan read a contract
// address from. Setting SHARDLINE_EVM_TOKEN_CONTRACTS (legacy name SHARDLINE_DESK_STABLECOINS):
//
//   ethereum:USDC=0xA0b8…,base:USDC=0x8335…          (entries joined by commas), or JSON
//   {"ethereum": {"USDC": "0xA0b8…"}, "base": {"USDC": "0x8335…"}}
//
// A chain and symbol not listed is at the devnet's address: the hot wallet's deployed contract
// (devnetTokens.ts), what the in-process devnets and an anvil set up by us have. Decimals are
// never configured: they are read from the contract. Parsed with a schema, without viem (every
// CLI command reads the config); the EIP-55 checksum of a mixed-case address is checked where the
// addresses are first used at start (the reserves scan) and by the EVM port on every call.
import { Either, ParseResult, Schema } from "effect"
import type { Address } from "viem"
import type { EvmChain } from "./chains.ts"

/** The symbols, in the devnet's deploy order (devnetTokens.ts keeps the same list). */
export const tokenContractSymbols = ["USDC", "USDT", "PYUSD", "DAI"] as const
export type TokenSymbol = (typeof tokenContractSymbols)[number]

const Chain = Schema.Literal("ethereum", "base", "bsc")
const Symbol = Schema.Literal(...tokenContractSymbols)
const ContractAddress = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{40}$/, { message: () => "an address is 0x followed by 40 hex digits" }))

export const TokenContract = Schema.Struct({ chain: Chain, symbol: Symbol, address: ContractAddress })
export type TokenContract = typeof TokenContract.Type

/** The JSON form: chain → symbol → address, each optional. */
const Symbols = Schema.partial(Schema.Struct({ USDC: ContractAddress, USDT: ContractAddress, PYUSD: ContractAddress, DAI: ContractAddress }))
const JsonForm = Schema.partial(Schema.Struct({ ethereum: Symbols, base: Symbols, bsc: Symbols }))

const entry = /^([^:=\s]+):([^:=\s]+)=(\S+)$/

/** The first issue, with its path: `base.FRAX: is unexpected`. */
const message = (e: ParseResult.ParseError) => {
  const first = ParseResult.ArrayFormatter.formatErrorSync(e)[0]
  return first === undefined ? "malformed" : `${first.path.length > 0 ? `${first.path.join(".")}: ` : ""}${first.message}`
}

/** The setting's text as contracts: at most one per chain and symbol; a message saying what to fix otherwise. */
export const parseTokenContracts = (text: string): Either.Either<ReadonlyArray<TokenContract>, string> => {
  const trimmed = text.trim()
  const out: Array<TokenContract> = []
  const add = (c: TokenContract): string | undefined => {
    if (out.some((o) => o.chain === c.chain && o.symbol === c.symbol)) return `${c.chain}:${c.symbol} is listed twice`
    out.push(c)
    return undefined
  }
  if (trimmed.startsWith("{")) {
    let json: unknown
    try {
      json = JSON.parse(trimmed)
    } catch {
      return Either.left("not valid JSON (or use chain:SYMBOL=0x… entries joined by commas)")
    }
    const decoded = Schema.decodeUnknownEither(JsonForm, { onExcessProperty: "error" })(json)
    if (Either.isLeft(decoded)) return Either.left(`chains ethereum, base, bsc; symbols ${tokenContractSymbols.join(", ")}: ${message(decoded.left)}`)
    for (const [chain, symbols] of Object.entries(decoded.right)) {
      for (const [symbol, address] of Object.entries(symbols ?? {})) {
        if (address !== undefined) add({ chain: chain as EvmChain, symbol: symbol as TokenSymbol, address })
      }
    }
    return Either.right(out)
  }
  for (const [i, raw] of trimmed.split(",").map((e) => e.trim()).filter((e) => e !== "").entries()) {
    const m = entry.exec(raw)
    if (m === null) return Either.left(`entry ${i + 1} is not chain:SYMBOL=0x… (40 hex digits)`)
    const [, chain, symbol, address] = m
    if (!Schema.is(Chain)(chain)) return Either.left(`entry ${i + 1}: unknown chain "${chain!.slice(0, 20)}" (ethereum, base, bsc)`)
    if (!Schema.is(Symbol)(symbol)) return Either.left(`entry ${i + 1}: ${symbol!.slice(0, 20)} is not one of ${tokenContractSymbols.join(", ")}`)
    const decoded = Schema.decodeUnknownEither(ContractAddress)(address)
    if (Either.isLeft(decoded)) return Either.left(`entry ${i + 1}: ${message(decoded.left)}`)
    const twice = add({ chain, symbol, address: decoded.right })
    if (twice !== undefined) return Either.left(twice)
  }
  return Either.right(out)
}

/** The configured contract of `symbol` on `chain`, else undefined (the caller's default is the devnet's). */
export const configuredTokenContract = (contracts: ReadonlyArray<TokenContract>, chain: EvmChain, symbol: TokenSymbol): Address | undefined =>
  contracts.find((c) => c.chain === chain && c.symbol === symbol)?.address as Address | undefined
