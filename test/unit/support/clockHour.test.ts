// The wait that keeps an attestation-counting test clear of the hourly tick.
import { describe, expect, it } from "vitest"
import { waitBeforeHour } from "../../support/clockHour.ts"

const at = (iso: string) => Date.parse(iso)

describe("waitBeforeHour", () => {
  it("waits past the hour when it is closer than the margin, not otherwise", () => {
    expect(waitBeforeHour(at("2026-11-29T18:59:00Z"), 180_000)).toBe(60_000 + 5_000)
    expect(waitBeforeHour(at("2026-11-29T18:57:00.001Z"), 180_000)).toBe(179_999 + 5_000)
    expect(waitBeforeHour(at("2026-11-29T18:57:00Z"), 180_000)).toBe(0)
    expect(waitBeforeHour(at("2026-11-29T19:00:00Z"), 180_000)).toBe(0)
    expect(waitBeforeHour(at("2026-11-29T19:30:00Z"), 180_000)).toBe(0)
  })
})
