// The chaos checker's durable-timer rules at their edges: lateness split by the due time's fault
// window, "fired once" (a redelivery is excused only inside a window; a link token's one Expire,
// missing after the grace or twice), and an order's Tick chain quiet beyond the allowance.
import { describe, expect, it } from "vitest"
import { distribution, type Firing, latenessSplit, linkExpiryProblems, percentile, redeliveredOutsideFaults, tickChainGaps } from "../../../harness/chaos/timerRules.ts"

const runStartMs = 1_000_000
const at = (s: number) => runStartMs + s * 1000
const windows = [{ fromMs: 20_000, toMs: 30_000 }]
const firing = (entityId: string, dueS: number, firedS: number, more: Partial<Firing> = {}): Firing =>
  ({ entityId, dueMs: at(dueS), firedMs: at(firedS), lastFiredMs: at(firedS), deliveries: 1, ...more })

describe("chaos timer rules", () => {
  it("splits lateness by whether the timer was due inside a fault window, edges included, and leaves out timers due before the run", () => {
    const split = latenessSplit([
      firing("a", 10, 10.5), firing("b", 20, 27), firing("c", 30, 31), firing("d", 30.5, 30.75), firing("e", -1, 40), firing("f", 50, 49.9)
    ], windows, runStartMs)
    expect(split.inside).toEqual([7000, 1000])
    // 30.5 s is past the window's end; a timer that ran early counts as 0.
    expect(split.outside).toEqual([500, 250, 0])
  })

  it("writes a distribution as p50/p99/max with its count", () => {
    expect(distribution([])).toBe("0/0/0 (n=0)")
    const xs = Array.from({ length: 100 }, (_, i) => i + 1)
    expect(percentile(xs, 50)).toBe(51)
    expect(distribution(xs)).toBe("51/100/100 (n=100)")
  })

  it("excuses a redelivery only when its last delivery was inside a fault window", () => {
    const twiceInside = firing("in", 19, 19.5, { deliveries: 2, lastFiredMs: at(25) })
    const twiceOutside = firing("out", 40, 40.5, { deliveries: 2, lastFiredMs: at(41) })
    const once = firing("once", 40, 40.5)
    expect(redeliveredOutsideFaults([twiceInside, twiceOutside, once], windows, runStartMs)).toEqual([twiceOutside])
  })

  it("finds a link token's Expire missing after the grace, fired for two due times, or for another time than its expiry", () => {
    const checkMs = at(100)
    const tokens = [
      { id: "fired", expiresMs: at(50) },
      { id: "missing", expiresMs: at(70) },
      { id: "not-yet", expiresMs: at(70.5) },
      { id: "twice", expiresMs: at(60) },
      { id: "wrong-due", expiresMs: at(60) }
    ]
    const firings = [firing("fired", 50, 51), firing("twice", 60, 61), firing("twice", 65, 66), firing("wrong-due", 59, 61)]
    const problems = linkExpiryProblems(tokens, firings, { checkMs, graceMs: 30_000 })
    expect(problems.map((p) => p.id)).toEqual(["missing", "twice", "wrong-due"])
    expect(problems[0]!.problem).toContain("never fired")
    expect(problems[1]!.problem).toContain("2 Expire firings")
  })

  it("finds an order's Tick chain quiet beyond the allowance outside fault windows, to the check only while the order is open", () => {
    const o = { checkMs: at(100), allowedMs: 10_000, windows, runStartMs }
    const ticks = [5, 8, 11, 14, 17, 35, 38, 41].map((s) => firing("order", s - 0.5, s))
    // 17 → 35 s: 18 s long, 10 s in the window, 8 s quiet: allowed. 41 s → the check: 59 s quiet while open.
    expect(tickChainGaps({ createdMs: at(4), open: false }, ticks, o)).toEqual([])
    expect(tickChainGaps({ createdMs: at(4), open: true }, ticks, o)).toEqual([{ fromMs: 41_000, toMs: 100_000, quietMs: 59_000 }])
    // A chain that stops during the run and starts again: the gap outside the window counts.
    const broken = [5, 8, 50, 53].map((s) => firing("order", s, s))
    expect(tickChainGaps({ createdMs: at(4), open: false }, broken, o)).toEqual([{ fromMs: 8_000, toMs: 50_000, quietMs: 32_000 }])
    // An order whose first tick never came: from its creation.
    expect(tickChainGaps({ createdMs: at(60), open: true }, [], o)).toEqual([{ fromMs: 60_000, toMs: 100_000, quietMs: 40_000 }])
  })
})
