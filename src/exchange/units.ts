// The one place where decimal strings from the wire become integer units and back. A price is a
// whole number of ticks (PRICE_FILTER tickSize), a quantity a whole number of lots (LOT_SIZE
// stepSize). Exact: bigint arithmetic on the digits, never a float.

/** digits × 10^-scale, e.g. "0.00100000" is { digits: 100000n, scale: 8 }. */
export interface Decimal {
  readonly digits: bigint
  readonly scale: number
}

/** Binance's accepted shape for prices and quantities; anything else is -1100 "Illegal characters". */
export const DECIMAL_PATTERN = "^([0-9]{1,20})(\\.[0-9]{1,20})?$"
const DECIMAL = new RegExp(DECIMAL_PATTERN)

/** Parses a plain decimal string (no sign, no exponent, at most 20 digits each side of the dot). */
export const parseDecimal = (s: string): Decimal | undefined => {
  const m = DECIMAL.exec(s)
  if (m === null) return undefined
  const frac = m[2] === undefined ? "" : m[2].slice(1)
  return { digits: BigInt(m[1]! + frac), scale: frac.length }
}

const pow10 = (n: number): bigint => 10n ** BigInt(n)

/** The same value with trailing zeros dropped: "0.01000000" becomes { digits: 1n, scale: 2 }. */
export const normalize = (d: Decimal): Decimal => {
  let { digits, scale } = d
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n
    scale--
  }
  return { digits, scale }
}

/** a compared with b: -1, 0 or 1. */
export const compareDecimals = (a: Decimal, b: Decimal): number => {
  const scale = Math.max(a.scale, b.scale)
  const x = a.digits * pow10(scale - a.scale)
  const y = b.digits * pow10(scale - b.scale)
  return x < y ? -1 : x > y ? 1 : 0
}

export type UnitsResult =
  | { readonly _tag: "Units"; readonly units: bigint }
  | { readonly _tag: "Malformed" }
  | { readonly _tag: "NotMultiple" }

/** How many whole `unit`s `value` is; NotMultiple when it is not a whole number of them (e.g. too many decimals). */
export const toUnits = (value: string, unit: Decimal): UnitsResult => {
  const d = parseDecimal(value)
  if (d === undefined) return { _tag: "Malformed" }
  return decimalToUnits(d, unit)
}

export const decimalToUnits = (d: Decimal, unit: Decimal): UnitsResult => {
  const scale = Math.max(d.scale, unit.scale)
  const v = d.digits * pow10(scale - d.scale)
  const u = unit.digits * pow10(scale - unit.scale)
  if (u === 0n || v % u !== 0n) return { _tag: "NotMultiple" }
  return { _tag: "Units", units: v / u }
}

/** `units` whole `unit`s as a decimal string with `decimals` places (default: the unit's own). */
export const formatUnits = (units: number | bigint, unit: Decimal, decimals: number = unit.scale): string => {
  const places = Math.max(decimals, unit.scale)
  const v = BigInt(units) * unit.digits * pow10(places - unit.scale)
  const sign = v < 0n ? "-" : ""
  const s = (v < 0n ? -v : v).toString().padStart(places + 1, "0")
  return places === 0 ? sign + s : `${sign}${s.slice(0, s.length - places)}.${s.slice(s.length - places)}`
}
