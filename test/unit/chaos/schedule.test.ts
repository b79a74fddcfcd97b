// The chaos campaign's seed is its whole story: the same seed gives the same schedule and the
// same draws, and a schedule keeps its own rules (quiet head and tail, bounded outages).
import { describe, expect, it } from "vitest"
import { makeRng } from "../../../harness/chaos/rng.ts"
import { faultLimits, makeSchedule } from "../../../harness/chaos/schedule.ts"
import { faultWindows, inWindow } from "../../../harness/chaos/windows.ts"

const options = { durationMs: 180_000, nodes: 3, meanGapMs: 20_000, quietHeadMs: 15_000, quietTailMs: 40_000 }

describe("chaos schedule", () => {
  it("is the same for the same seed and differs for another", () => {
    const a = makeSchedule(makeRng(42).fork("nemesis"), options)
    const b = makeSchedule(makeRng(42).fork("nemesis"), options)
    const c = makeSchedule(makeRng(43).fork("nemesis"), options)
    expect(a).toEqual(b)
    expect(a.length).toBeGreaterThan(2)
    expect(JSON.stringify(c)).not.toEqual(JSON.stringify(a))
  })

  it("keeps a quiet head and tail and bounds every outage, over many seeds", () => {
    const kinds = new Set<string>()
    for (let seed = 0; seed < 200; seed++) {
      for (const s of makeSchedule(makeRng(seed).fork("nemesis"), options)) {
        kinds.add(s.fault.kind)
        expect(s.atMs).toBeGreaterThanOrEqual(options.quietHeadMs)
        expect(s.atMs).toBeLessThan(options.durationMs - options.quietTailMs)
        const f = s.fault
        if (f.kind === "kill-node") expect(f.downMs).toBeLessThanOrEqual(faultLimits.killDownMsMax)
        if (f.kind === "cut-database") expect(f.forMs).toBeLessThanOrEqual(faultLimits.cutMsMax)
        if (f.kind === "reorg") expect(f.depth).toBeGreaterThanOrEqual(1), expect(f.depth).toBeLessThanOrEqual(3)
        if ("node" in f) expect(f.node).toBeLessThan(options.nodes)
      }
    }
    expect([...kinds].sort()).toEqual(["cut-database", "kill-node", "ledger-rpc", "partition-runner", "reorg", "restart-postgres"])
  })

  it("forks independent streams: one client's draws do not move when another is added", () => {
    const root = makeRng(7)
    const first = Array.from({ length: 5 }, () => root.fork("trader t0").next())
    const again = makeRng(7)
    again.fork("trader t1").next()
    expect(Array.from({ length: 5 }, () => again.fork("trader t0").next())).toEqual(first)
  })

  it("merges overlapping fault windows and pads each with the recovery time", () => {
    const w = faultWindows([
      { atMs: 10_000, fault: { kind: "cut-database", forMs: 5_000 }, startedAtMs: 10_000, endedAtMs: 15_000 },
      { atMs: 20_000, fault: { kind: "reorg", depth: 1 }, startedAtMs: 20_000, endedAtMs: 20_500 },
      { atMs: 90_000, fault: { kind: "reorg", depth: 1 }, startedAtMs: 90_000, endedAtMs: 90_100 }
    ])
    expect(w).toEqual([{ fromMs: 10_000, toMs: 40_500 }, { fromMs: 90_000, toMs: 110_100 }])
    expect(inWindow(w, 39_000)).toBe(true)
    expect(inWindow(w, 60_000)).toBe(false)
  })
})
