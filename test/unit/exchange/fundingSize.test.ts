import { describe, expect, it } from "vitest"
import { fundingLegsFor, fundingLegsMax, fundingLegsMin, lowWaterFor, lowWaterLegsMin, SlidingCount } from "../../../src/exchange/authorization/fundingSize.ts"

describe("funding size", () => {
  it("funds a quiet address the minimum, a busy one its last window's legs, never past the cap", () => {
    expect(fundingLegsFor(1, 0)).toBe(fundingLegsMin)
    expect(fundingLegsFor(120, 3)).toBe(120)
    expect(fundingLegsFor(2, 370)).toBe(370)
    expect(fundingLegsFor(5_000, 0)).toBe(fundingLegsMax)
    expect(fundingLegsFor(0, 50_000)).toBe(fundingLegsMax)
  })

  it("tops up two seconds ahead at the recent rate, and at least at the minimum", () => {
    expect(lowWaterFor(0)).toBe(lowWaterLegsMin)
    expect(lowWaterFor(370)).toBe(74)
    expect(lowWaterFor(101)).toBe(lowWaterLegsMin + 1)
  })

  it("counts only the window's events", () => {
    const c = new SlidingCount(10_000)
    c.add(5, 1_000)
    c.add(3, 1_500)
    c.add(7, 6_200)
    expect(c.total(6_300)).toBe(15)
    // Ten seconds after the first second, its events are gone; the rest stay.
    expect(c.total(11_000)).toBe(7)
    expect(c.total(16_300)).toBe(0)
    c.add(2, 16_400)
    expect(c.total(16_400)).toBe(2)
  })
})
