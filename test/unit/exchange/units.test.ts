import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compareDecimals, formatUnits, normalize, parseDecimal, toUnits } from "../../../src/exchange/units.ts"

const d = (s: string) => {
  const v = parseDecimal(s)
  if (v === undefined) throw new Error(`not a decimal: ${s}`)
  return v
}

describe("decimal strings to integer units", () => {
  it("parses plain decimals exactly and refuses everything else", () => {
    expect(parseDecimal("0.00100000")).toEqual({ digits: 100000n, scale: 8 })
    expect(parseDecimal("60000")).toEqual({ digits: 60000n, scale: 0 })
    for (const bad of ["", "1e-7", "-1", ".5", "5.", "1,5", " 1", "0x10", "1.2.3", "1".repeat(21), `0.${"1".repeat(21)}`]) {
      expect(parseDecimal(bad), bad).toBeUndefined()
    }
  })

  it("converts to ticks/lots only when the value is a whole number of them", () => {
    const lot = d("0.00100000")
    expect(toUnits("0.00100000", lot)).toEqual({ _tag: "Units", units: 1n })
    expect(toUnits("1.5", lot)).toEqual({ _tag: "Units", units: 1500n })
    expect(toUnits("1.500000000000", lot)).toEqual({ _tag: "Units", units: 1500n }) // extra zeros are fine
    expect(toUnits("0.0015", lot)).toEqual({ _tag: "NotMultiple" })
    expect(toUnits("0.0010000001", lot)).toEqual({ _tag: "NotMultiple" }) // too many decimals
    expect(toUnits("1e-3", lot)).toEqual({ _tag: "Malformed" })
    expect(toUnits("12345678901234567890.5", d("0.5"))).toEqual({ _tag: "Units", units: 24691357802469135781n })
    expect(toUnits("10", d("2.5"))).toEqual({ _tag: "Units", units: 4n })
  })

  it("formats units back with the unit's decimals or more", () => {
    expect(formatUnits(1500, d("0.001"))).toBe("1.500")
    expect(formatUnits(1500, d("0.001"), 8)).toBe("1.50000000")
    expect(formatUnits(7, d("0.00000001"))).toBe("0.00000007")
    expect(formatUnits(3, d("5"))).toBe("15")
    expect(formatUnits(0n, d("0.01"))).toBe("0.00")
  })

  it("round-trips: format(units) parses back to the same units", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 1, max: 99 }), (u, scale, digits) => {
        const unit = { digits: BigInt(digits), scale }
        expect(toUnits(formatUnits(u, unit), unit)).toEqual({ _tag: "Units", units: u })
      })
    )
  })

  it("normalizes without changing the value", () => {
    expect(normalize(d("0.01000000"))).toEqual({ digits: 1n, scale: 2 })
    expect(normalize(d("100"))).toEqual({ digits: 100n, scale: 0 })
    expect(normalize(d("0.000"))).toEqual({ digits: 0n, scale: 0 })
  })

  it("compares decimals of different scales", () => {
    expect(compareDecimals(d("10.0"), d("10"))).toBe(0)
    expect(compareDecimals(d("9.99999999"), d("10"))).toBe(-1)
    expect(compareDecimals(d("10.00000001"), d("10"))).toBe(1)
  })
})
