import { describe, expect, it } from "vitest"
import { initialWatch, observe, sharedDatabase } from "../../../src/platform/ops/ShardWatchdog.ts"

describe("shard watchdog", () => {
  it("gives up only after holding fewer shards than expected for the whole limit", () => {
    let w = observe(initialWatch, 300, 300, 0, 10_000)
    w = observe(w, 120, 300, 1_000, 10_000)
    expect(w).toEqual({ armed: true, shortSinceMs: 1_000, giveUp: false })
    w = observe(w, 0, 300, 10_999, 10_000)
    expect(w.giveUp).toBe(false)
    w = observe(w, 0, 300, 11_000, 10_000)
    expect(w).toEqual({ armed: true, shortSinceMs: 1_000, giveUp: true })
  })

  it("starts over when the node holds every shard again", () => {
    let w = observe(observe(initialWatch, 300, 300, 0, 10_000), 0, 300, 0, 10_000)
    w = observe(w, 300, 300, 9_000, 10_000)
    expect(w).toEqual({ armed: true, shortSinceMs: undefined, giveUp: false })
    w = observe(w, 10, 300, 15_000, 10_000)
    expect(w).toEqual({ armed: true, shortSinceMs: 15_000, giveUp: false })
  })

  it("never watches a runner that has not held all its shards yet (a second runner on the same database)", () => {
    let w = initialWatch
    for (let t = 0; t <= 600_000; t += 2_000) w = observe(w, 0, 300, t, 10_000)
    expect(w).toEqual(initialWatch)
  })

  it("a single node says so when another runner is live on its database, and is silent alone", () => {
    expect(sharedDatabase(1)).toBeUndefined()
    expect(sharedDatabase(0)).toBeUndefined()
    expect(sharedDatabase(2)).toMatch(/^SHARDLINE_TOPOLOGY=single, but 2 runners are live on this database: .* need SHARDLINE_TOPOLOGY=socket$/)
  })
})
