import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { DECIMALS_MAX, formatAmount, INTEGER_DIGITS_MAX, parseAmount } from "../../../src/chain/units.ts"

const parsed = (text: string, decimals: number) => {
  const r = parseAmount(text, decimals)
  return Either.isRight(r) ? r.right : r.left.message
}
const formatted = (base: bigint, decimals: number) => {
  const r = formatAmount(base, decimals)
  return Either.isRight(r) ? r.right : r.left.message
}

describe("parseAmount", () => {
  it("turns a decimal into base units exactly", () => {
    expect(parsed("1.5", 6)).toBe(1_500_000n)
    expect(parsed("1.5", 18)).toBe(1_500_000_000_000_000_000n)
    expect(parsed("0.00000001", 8)).toBe(1n)
    expect(parsed("12", 0)).toBe(12n)
    expect(parsed("007.10", 2)).toBe(710n)
    // A float would lose this one: 0.1 + 0.2 style digits at 18 places.
    expect(parsed("123456789.123456789123456789", 18)).toBe(123_456_789_123_456_789_123_456_789n)
  })

  it("takes exactly `decimals` places and refuses one more (trailing zeros aside)", () => {
    expect(parsed("0.000001", 6)).toBe(1n)
    expect(parsed("0.0000001", 6)).toMatch(/more than 6 decimal places/)
    expect(parsed("1.1000000", 6)).toBe(1_100_000n)
    expect(parsed("0.5", 0)).toMatch(/more than 0 decimal places/)
  })

  it("refuses zero, negatives and anything that is not a plain decimal", () => {
    expect(parsed("0", 6)).toMatch(/greater than zero/)
    expect(parsed("0.000", 6)).toMatch(/greater than zero/)
    for (const bad of ["-1", "+1", "1e3", " 1", "1,5", ".5", "5.", "", "0x10", "1.2.3", "NaN"]) {
      expect(parsed(bad, 6), bad).toMatch(/not a plain positive decimal/)
    }
  })

  it("bounds integer digits and decimals on both sides", () => {
    expect(parsed("9".repeat(INTEGER_DIGITS_MAX), 0)).toBe(10n ** BigInt(INTEGER_DIGITS_MAX) - 1n)
    expect(parsed("9".repeat(INTEGER_DIGITS_MAX + 1), 0)).toMatch(/integer digits/)
    expect(parsed("1", DECIMALS_MAX)).toBe(10n ** BigInt(DECIMALS_MAX))
    expect(parsed("1", DECIMALS_MAX + 1)).toMatch(/decimals must be/)
    expect(parsed("1", -1)).toMatch(/decimals must be/)
    expect(parsed("1", 1.5)).toMatch(/decimals must be/)
  })
})

describe("formatAmount", () => {
  it("prints the asset's own unit without trailing zeros", () => {
    expect(formatted(1_500_000n, 6)).toBe("1.5")
    expect(formatted(1_500_000_000_000_000_000n, 18)).toBe("1.5")
    expect(formatted(1n, 8)).toBe("0.00000001")
    expect(formatted(0n, 6)).toBe("0")
    expect(formatted(100n, 2)).toBe("1")
    expect(formatted(42n, 0)).toBe("42")
  })

  it("refuses negatives and bad decimals", () => {
    expect(formatted(-1n, 6)).toMatch(/never negative/)
    expect(formatted(1n, DECIMALS_MAX + 1)).toMatch(/decimals must be/)
  })

  it("round-trips with parseAmount", () => {
    for (const [text, d] of [["1.5", 18], ["0.000001", 6], ["123456.789", 8], ["5", 0]] as const) {
      const base = parseAmount(text, d)
      expect(Either.isRight(base) && formatAmount(base.right, d)).toEqual(Either.right(text))
    }
  })
})
