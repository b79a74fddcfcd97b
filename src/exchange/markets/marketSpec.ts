// What a market is (the rows of `markets`), and the rules a new one must pass: pure, no I/O.
// Every market asset is a divisible Omni property (8 decimals), so a quantity (lots × stepSize)
// and a notional (ticks × tickSize × lots × stepSize) must both be whole satoshis: stepSize has
// at most 8 decimals and tickSize + stepSize at most 8 together. Checked here, once, at listing.
import { Data, Either } from "effect"
import { compileFilters, type FilterSpec, type MarketFilters } from "../filters.ts"
import { parseDecimal } from "../units.ts"
import { MARKET_ID_MAX } from "./ids.ts"

export const ASSET_DECIMALS = 8

export interface MarketRow {
  readonly id: number
  readonly symbol: string
  readonly base: string
  readonly quote: string
  readonly baseProperty: number
  readonly quoteProperty: number
  readonly filters: FilterSpec
  readonly status: "TRADING" | "HALT" | "BREAK"
}

/** A listed market with its filters compiled (what the Market entity and exchangeInfo use). */
export interface Market extends MarketRow {
  readonly compiled: MarketFilters
}

export class MarketInvalid extends Data.TaggedError("MarketInvalid")<{ readonly message: string }> {}

export interface NewMarket {
  readonly symbol?: string
  readonly base: string
  readonly quote: string
  readonly tickSize: string
  readonly stepSize: string
  readonly minNotional: string
  readonly minPrice?: string
  readonly maxPrice?: string
  readonly minQty?: string
  readonly maxQty?: string
  readonly maxNotional?: string
}

const ASSET = /^[A-Z0-9]{2,12}$/

/** Binance's bounds when none are given: min = one tick / one lot, max = a large round number. */
const defaults = (m: NewMarket): FilterSpec => ({
  tickSize: m.tickSize,
  stepSize: m.stepSize,
  minPrice: m.minPrice ?? m.tickSize,
  maxPrice: m.maxPrice ?? "1000000",
  minQty: m.minQty ?? m.stepSize,
  maxQty: m.maxQty ?? "9000000",
  minNotional: m.minNotional,
  maxNotional: m.maxNotional ?? "0"
})

/** Checks a new market; its symbol is BASE+QUOTE unless given (and then must be exactly that). */
export const checkNewMarket = (m: NewMarket, id: number): Either.Either<Market, MarketInvalid> => {
  const invalid = (message: string) => Either.left(new MarketInvalid({ message }))
  const base = m.base.trim().toUpperCase()
  const quote = m.quote.trim().toUpperCase()
  if (!ASSET.test(base) || !ASSET.test(quote)) return invalid("base and quote are asset codes: 2 to 12 upper-case letters or digits")
  if (base === quote) return invalid("base and quote must differ")
  const symbol = base + quote
  if (m.symbol !== undefined && m.symbol.trim().toUpperCase().replace(/[_/-]/, "") !== symbol) {
    return invalid(`symbol ${m.symbol} is not ${base}+${quote} (${symbol})`)
  }
  if (!Number.isInteger(id) || id < 1 || id > MARKET_ID_MAX) return invalid(`at most ${MARKET_ID_MAX} markets`)
  const spec = defaults(m)
  const tick = parseDecimal(spec.tickSize)
  const step = parseDecimal(spec.stepSize)
  if (tick === undefined || step === undefined) return invalid("tick and lot are plain decimals such as 0.01")
  const compiled = compileFilters(spec)
  if (compiled._tag === "InvalidSpec") return invalid(compiled.reason)
  const { tick: t, step: s } = compiled.filters
  if (s.scale > ASSET_DECIMALS) return invalid(`lot ${spec.stepSize} has more than ${ASSET_DECIMALS} decimals, finer than the asset's satoshi`)
  if (t.scale + s.scale > ASSET_DECIMALS) {
    return invalid(`tick ${spec.tickSize} × lot ${spec.stepSize} is finer than one satoshi of ${quote}: their decimals must add up to at most ${ASSET_DECIMALS}`)
  }
  return Either.right({ id, symbol, base, quote, baseProperty: 0, quoteProperty: 0, filters: spec, status: "TRADING", compiled: compiled.filters })
}

/** Compiles a stored row (its spec was checked at listing; a row that no longer compiles is a bug). */
export const compileRow = (row: MarketRow): Market => {
  const compiled = compileFilters(row.filters)
  if (compiled._tag === "InvalidSpec") throw new Error(`market ${row.symbol} in the database does not compile: ${compiled.reason}`)
  return { ...row, compiled: compiled.filters }
}
