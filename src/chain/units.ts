// An asset's own unit (a decimal string, "1.5" USDC) and its base unit (bigint, 1500000) in
// both directions, for any asset with a fixed number of decimals: ledger coins (8), Omni
// divisible (8) or indivisible (0) properties, ERC-20s (`decimals()`, 0..77 in practice).
// Exact: digit strings and bigint only, never a float. The exchange's tick/lot arithmetic has
// its own module (src/exchange/units.ts); this one serves the chains and everything above them.
import { Data, Either } from "effect"

/** An amount that is not a plain positive decimal in the asset's precision. */
export class AmountInvalid extends Data.TaggedError("AmountInvalid")<{ readonly message: string }> {}

/** Largest `decimals` we accept: uint8 in ERC-20, and 10^77 < 2^256 (the largest uint256 amount). */
export const DECIMALS_MAX = 77
/** Digits before the point: bounds the work and keeps every amount below 2^256 base units. */
export const INTEGER_DIGITS_MAX = 40

const AMOUNT = /^([0-9]+)(?:\.([0-9]+))?$/

const checkDecimals = (decimals: number): string | undefined =>
  Number.isInteger(decimals) && decimals >= 0 && decimals <= DECIMALS_MAX ? undefined : `decimals must be an integer in 0..${DECIMALS_MAX}, got ${decimals}`

/**
 * "1.5" with 6 decimals is 1500000n. Refused: anything but digits with at most one point (no
 * sign, exponent, spaces or grouping), more fraction digits than `decimals` (unless they are
 * trailing zeros), zero, and more than INTEGER_DIGITS_MAX integer digits.
 */
export const parseAmount = (text: string, decimals: number): Either.Either<bigint, AmountInvalid> => {
  const bad = checkDecimals(decimals)
  if (bad !== undefined) return Either.left(new AmountInvalid({ message: bad }))
  const m = AMOUNT.exec(text)
  if (m === null) return Either.left(new AmountInvalid({ message: `amount "${text}" is not a plain positive decimal such as 12 or 0.5` }))
  const whole = m[1]!.replace(/^0+(?=.)/, "")
  const fraction = (m[2] ?? "").replace(/0+$/, "")
  if (whole.length > INTEGER_DIGITS_MAX) return Either.left(new AmountInvalid({ message: `amount "${text}" has more than ${INTEGER_DIGITS_MAX} integer digits` }))
  if (fraction.length > decimals) {
    return Either.left(new AmountInvalid({ message: `amount "${text}" has more than ${decimals} decimal places, the most this asset has` }))
  }
  const base = BigInt(whole + fraction.padEnd(decimals, "0"))
  if (base === 0n) return Either.left(new AmountInvalid({ message: "amount must be greater than zero" }))
  return Either.right(base)
}

/** 1500000n with 6 decimals is "1.5": no trailing zeros, no point for a whole number. */
export const formatAmount = (base: bigint, decimals: number): Either.Either<string, AmountInvalid> => {
  const bad = checkDecimals(decimals)
  if (bad !== undefined) return Either.left(new AmountInvalid({ message: bad }))
  if (base < 0n) return Either.left(new AmountInvalid({ message: `a base-unit amount is never negative, got ${base}` }))
  const digits = base.toString().padStart(decimals + 1, "0")
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "")
  return Either.right(fraction === "" ? whole : `${whole}.${fraction}`)
}

/**
 * A base-unit amount at `from` decimals in base units of `to` decimals, rounded up: what backs an
 * amount in a coarser unit is never less than it (8-decimal 1.00000001 → 6-decimal 1.000001).
 */
export const rescaleUp = (base: bigint, from: number, to: number): bigint => {
  if (to >= from) return base * 10n ** BigInt(to - from)
  const unit = 10n ** BigInt(from - to)
  return (base + unit - 1n) / unit
}
