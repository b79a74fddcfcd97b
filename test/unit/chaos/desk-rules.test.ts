// The desk checker's pure rules at their edges: amounts exact to the last unit, reserves against
// supply in an attestation's payload (the dollar pool and each wrapped token), and which gaps in
// the attestation series are violations (the time a fault window covers is excused, not the whole gap).
import { describe, expect, it } from "vitest"
import { attestationGaps, reservesShort, unitsOf } from "../../../harness/chaos/deskRules.ts"

describe("chaos desk rules", () => {
  it("reads decimals exactly, at any scale", () => {
    expect(unitsOf("12.5", 8)).toBe(1_250_000_000n)
    expect(unitsOf("0.00000001", 8)).toBe(1n)
    expect(unitsOf("10", 6)).toBe(10_000_000n)
    expect(unitsOf("0.1", 18)).toBe(10n ** 17n)
    expect(() => unitsOf("-1", 8)).toThrow()
    expect(() => unitsOf("1e5", 8)).toThrow()
  })

  it("finds the pool or the wrapped token whose reserves are below its supply, to the last unit", () => {
    const payload = {
      totalReserves: "100.000001", circulatingSupply: "100.000001",
      wrapped: [
        { asset: "LTC", wrapped: "wLTC", reserves: "0.5", wrappedSupply: "0.50000001" },
        { asset: "ETH", wrapped: "wETH", reserves: "2", wrappedSupply: "1.9999" }
      ]
    }
    expect(reservesShort(payload)).toEqual(["LTC reserves 0.5 < wLTC supply 0.50000001"])
    expect(reservesShort({ ...payload, circulatingSupply: "100.000002", wrapped: [] })).toEqual(["USD reserves 100.000001 < dollar supply 100.000002"])
    expect(reservesShort({ totalReserves: "0", circulatingSupply: "0" })).toEqual([])
  })

  it("reports gaps whose fault-free part is beyond the allowance, the run's edges included", () => {
    const runStartMs = 1_000_000
    const at = (s: number) => runStartMs + s * 1000
    const windows = [{ fromMs: 20_000, toMs: 30_000 }]
    // 15 → 45 s is 30 s long, 10 s of it in the window: 20 s quiet, allowed; 200 s is after the run.
    expect(attestationGaps([at(5), at(15), at(45), at(55), at(200)], { runStartMs, runEndMs: at(60), allowedMs: 20_000, windows })).toEqual([])
    // 15 → 50 s: 25 s quiet. A window does not excuse the whole gap it touches.
    expect(attestationGaps([at(5), at(15), at(50)], { runStartMs, runEndMs: at(60), allowedMs: 20_000, windows })).toEqual([{ fromMs: 15_000, toMs: 50_000, quietMs: 25_000 }])
    // The last attestation to the run's end counts too.
    expect(attestationGaps([at(5)], { runStartMs, runEndMs: at(60), allowedMs: 20_000, windows: [] })).toEqual([{ fromMs: 5_000, toMs: 60_000, quietMs: 55_000 }])
    expect(attestationGaps([], { runStartMs, runEndMs: at(10), allowedMs: 20_000, windows: [] })).toEqual([])
  })
})
