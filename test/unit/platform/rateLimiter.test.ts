import { describe, expect, it } from "vitest"
import { positions } from "../../../src/platform/RateLimiter.ts"

describe("group-committed request weight", () => {
  it("gives each request its exact running total within its bucket and window", () => {
    const batch = [
      { bucket: "a", window: 1, weight: 10 },
      { bucket: "b", window: 1, weight: 1 },
      { bucket: "a", window: 1, weight: 5 },
      { bucket: "a", window: 2, weight: 3 },
      { bucket: "b", window: 1, weight: 2 }
    ]
    // Totals after the write: bucket a already had 100 in window 1, b had nothing.
    const totals = new Map([["1|a", 115], ["1|b", 3], ["2|a", 3]])
    expect(positions(batch, totals)).toEqual([110, 1, 115, 3, 3])
  })
})
