// The checks in front of the book, with Binance's filter semantics and wording: PRICE_FILTER
// (tick size, min and max price), LOT_SIZE (step size, min and max quantity), NOTIONAL
// (price × quantity between min and max). A passing order comes out in integer ticks and lots,
// ready for OrderBook.place. The HTTP layer answers a FilterFailure with -1013 and `message`,
// and Malformed with -1100 and `message`.
import type { Decimal } from "./units.ts"
import { compareDecimals, decimalToUnits, formatUnits, normalize, parseDecimal } from "./units.ts"

/** The filters as published in exchangeInfo: decimal strings. maxNotional "0" means no maximum. */
export interface FilterSpec {
  readonly tickSize: string
  readonly minPrice: string
  readonly maxPrice: string
  readonly stepSize: string
  readonly minQty: string
  readonly maxQty: string
  readonly minNotional: string
  readonly maxNotional: string
}

export interface MarketFilters {
  readonly spec: FilterSpec
  readonly tick: Decimal
  readonly step: Decimal
  /** Bounds in ticks and lots, all safe integers. */
  readonly minPriceTicks: number
  readonly maxPriceTicks: number
  readonly minQtyLots: number
  readonly maxQtyLots: number
  readonly minNotional: Decimal
  readonly maxNotional: Decimal | undefined
}

export type FilterName = "PRICE_FILTER" | "LOT_SIZE" | "NOTIONAL"

export type CheckResult =
  | { readonly _tag: "Passed"; readonly price: number; readonly qty: number }
  | { readonly _tag: "FilterFailure"; readonly filter: FilterName; readonly message: string }
  | { readonly _tag: "Malformed"; readonly param: "price" | "quantity"; readonly message: string }

export type CompileResult =
  | { readonly _tag: "Compiled"; readonly filters: MarketFilters }
  | { readonly _tag: "InvalidSpec"; readonly reason: string }

const failure = (filter: FilterName): CheckResult => ({ _tag: "FilterFailure", filter, message: `Filter failure: ${filter}` })

const malformed = (param: "price" | "quantity"): CheckResult => ({
  _tag: "Malformed",
  param,
  message: `Illegal characters found in parameter '${param}'; legal range is '^([0-9]{1,20})(\\.[0-9]{1,20})?$'.`
})

/** Whole units of `value` as a positive safe integer, or undefined. */
const boundOf = (value: string, unit: Decimal): number | undefined => {
  const d = parseDecimal(value)
  const r = d && decimalToUnits(d, unit)
  if (r === undefined || r._tag !== "Units") return undefined
  return r.units > 0n && r.units <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r.units) : undefined
}

/** Validates a market's filters once, at listing: every bound a whole, positive, safe number of units. */
export const compileFilters = (spec: FilterSpec): CompileResult => {
  const invalid = (reason: string): CompileResult => ({ _tag: "InvalidSpec", reason })
  const tickSize = parseDecimal(spec.tickSize)
  const stepSize = parseDecimal(spec.stepSize)
  if (tickSize === undefined || tickSize.digits === 0n) return invalid("tickSize must be a positive decimal")
  if (stepSize === undefined || stepSize.digits === 0n) return invalid("stepSize must be a positive decimal")
  const tick = normalize(tickSize)
  const step = normalize(stepSize)
  const minPriceTicks = boundOf(spec.minPrice, tick)
  const maxPriceTicks = boundOf(spec.maxPrice, tick)
  const minQtyLots = boundOf(spec.minQty, step)
  const maxQtyLots = boundOf(spec.maxQty, step)
  if (minPriceTicks === undefined || maxPriceTicks === undefined || minPriceTicks > maxPriceTicks) {
    return invalid("minPrice and maxPrice must be positive multiples of tickSize, min ≤ max, below 2^53 ticks")
  }
  if (minQtyLots === undefined || maxQtyLots === undefined || minQtyLots > maxQtyLots) {
    return invalid("minQty and maxQty must be positive multiples of stepSize, min ≤ max, below 2^53 lots")
  }
  const minNotional = parseDecimal(spec.minNotional)
  const maxNotional = parseDecimal(spec.maxNotional)
  if (minNotional === undefined || maxNotional === undefined) return invalid("minNotional and maxNotional must be decimals")
  const noMax = maxNotional.digits === 0n
  if (!noMax && compareDecimals(minNotional, maxNotional) > 0) return invalid("minNotional must not exceed maxNotional")
  return {
    _tag: "Compiled",
    filters: {
      spec,
      tick,
      step,
      minPriceTicks,
      maxPriceTicks,
      minQtyLots,
      maxQtyLots,
      minNotional,
      maxNotional: noMax ? undefined : maxNotional
    }
  }
}

/** price × qty in the quote asset, exactly. */
export const notionalOf = (f: MarketFilters, priceTicks: number, qtyLots: number): Decimal => ({
  digits: BigInt(priceTicks) * f.tick.digits * BigInt(qtyLots) * f.step.digits,
  scale: f.tick.scale + f.step.scale
})

/** The quote amount of a fill as a decimal string (for settlement and trade records). */
export const formatNotional = (f: MarketFilters, priceTicks: number, qtyLots: number): string => {
  const n = notionalOf(f, priceTicks, qtyLots)
  return formatUnits(n.digits, { digits: 1n, scale: n.scale })
}

/** Checks a new order's price and quantity strings; on success returns them in ticks and lots. */
export const checkOrder = (f: MarketFilters, price: string, quantity: string): CheckResult => {
  const p = parseDecimal(price)
  if (p === undefined) return malformed("price")
  const q = parseDecimal(quantity)
  if (q === undefined) return malformed("quantity")
  const ticks = decimalToUnits(p, f.tick)
  if (ticks._tag !== "Units" || ticks.units < BigInt(f.minPriceTicks) || ticks.units > BigInt(f.maxPriceTicks)) {
    return failure("PRICE_FILTER")
  }
  const lots = decimalToUnits(q, f.step)
  if (lots._tag !== "Units" || lots.units < BigInt(f.minQtyLots) || lots.units > BigInt(f.maxQtyLots)) {
    return failure("LOT_SIZE")
  }
  const priceTicks = Number(ticks.units)
  const qtyLots = Number(lots.units)
  const notional = notionalOf(f, priceTicks, qtyLots)
  if (compareDecimals(notional, f.minNotional) < 0) return failure("NOTIONAL")
  if (f.maxNotional !== undefined && compareDecimals(notional, f.maxNotional) > 0) return failure("NOTIONAL")
  return { _tag: "Passed", price: priceTicks, qty: qtyLots }
}
