import { Effect } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import {
  charge, dropEnded, layerLocal, peekUsage, RateLimiter, restore, retryAfterSec, settle, slotKey, takeDeltas,
  type Tally, windowMs, windowOf
} from "../../../src/platform/RateLimiter.ts"

const t0 = 1_000 * windowMs // the start of a window
const totals = (entries: Array<[string, number, number]>) => new Map(entries.map(([b, w, n]) => [slotKey(b, w), n]))

describe("window math", () => {
  it("puts a time in its calendar minute and counts the seconds to the next", () => {
    expect(windowOf(t0)).toBe(1000)
    expect(windowOf(t0 + windowMs - 1)).toBe(1000)
    expect(windowOf(t0 + windowMs)).toBe(1001)
    expect(retryAfterSec(t0)).toBe(60)
    expect(retryAfterSec(t0 + 59_001)).toBe(1)
    expect(retryAfterSec(t0 + windowMs - 1)).toBe(1) // never 0
  })
})

describe("local charging", () => {
  it("allows up to the limit inclusive and still charges a refused call", () => {
    const tally: Tally = new Map()
    expect(charge(tally, "ip:a", 6, 10, t0)).toMatchObject({ used: 6, allowed: true })
    expect(charge(tally, "ip:a", 4, 10, t0 + 1)).toMatchObject({ used: 10, allowed: true })
    expect(charge(tally, "ip:a", 1, 10, t0 + 2)).toMatchObject({ used: 11, allowed: false, limit: 10 })
    expect(charge(tally, "ip:a", 1, 10, t0 + 3).used).toBe(12)
    expect(peekUsage(tally, "ip:a", 10, t0 + 4)).toMatchObject({ used: 12, allowed: false })
    expect(peekUsage(tally, "ip:b", 10, t0 + 4)).toMatchObject({ used: 0, allowed: true })
  })

  it("starts a new window at the minute", () => {
    const tally: Tally = new Map()
    charge(tally, "k", 50, 10, t0 + windowMs - 1)
    expect(charge(tally, "k", 1, 10, t0 + windowMs)).toMatchObject({ used: 1, allowed: true, retryAfterSec: 60 })
  })

  it("tracks at most `max` slots, evicting the oldest", () => {
    const tally: Tally = new Map()
    for (let i = 0; i < 5; i++) charge(tally, `b${i}`, 1, 10, t0 + i, 3)
    expect([...tally.values()].map((s) => s.bucket)).toEqual(["b2", "b3", "b4"])
  })
})

describe("sync bookkeeping", () => {
  it("takes each delta once, and the cluster total read back replaces the node's synced part", () => {
    const tally: Tally = new Map()
    charge(tally, "a", 3, 100, t0)
    charge(tally, "a", 2, 100, t0 + 1)
    charge(tally, "b", 7, 100, t0 + 2)
    const rows = takeDeltas(tally, t0 + 10)
    expect(rows).toEqual([{ bucket: "a", window: 1000, delta: 5 }, { bucket: "b", window: 1000, delta: 7 }])
    // Charged while the statement runs: counted now, written next time.
    charge(tally, "a", 1, 100, t0 + 11)
    expect(peekUsage(tally, "a", 100, t0 + 12).used).toBe(6)
    // Another node had spent 40 on a.
    settle(tally, rows, totals([["a", 1000, 45], ["b", 1000, 7]]))
    expect(peekUsage(tally, "a", 100, t0 + 13).used).toBe(46)
    expect(takeDeltas(tally, t0 + 20)).toEqual([{ bucket: "a", window: 1000, delta: 1 }, { bucket: "b", window: 1000, delta: 0 }])
  })

  it("reads back a recently charged bucket with no delta, so it learns what other nodes spent", () => {
    const tally: Tally = new Map()
    charge(tally, "a", 1, 10, t0)
    settle(tally, takeDeltas(tally, t0 + 1), totals([["a", 1000, 1]]))
    const rows = takeDeltas(tally, t0 + 2)
    expect(rows).toEqual([{ bucket: "a", window: 1000, delta: 0 }])
    settle(tally, rows, totals([["a", 1000, 30]]))
    expect(peekUsage(tally, "a", 10, t0 + 3)).toMatchObject({ used: 30, allowed: false })
    // Not charged for longer than the read-back horizon: not read back any more.
    expect(takeDeltas(tally, t0 + 10_000, 5_000)).toEqual([])
  })

  it("a bucket with no row in Postgres has a cluster total of 0", () => {
    const tally: Tally = new Map()
    charge(tally, "a", 5, 10, t0)
    settle(tally, takeDeltas(tally, t0 + 1), totals([["a", 1000, 5]]))
    const rows = takeDeltas(tally, t0 + 2)
    settle(tally, rows, new Map()) // someone deleted the window's row
    expect(peekUsage(tally, "a", 10, t0 + 3).used).toBe(0)
  })

  it("puts a failed sync's deltas back, so the next sync writes them and nothing is lost", () => {
    const tally: Tally = new Map()
    charge(tally, "a", 4, 10, t0)
    const failed = takeDeltas(tally, t0 + 1)
    charge(tally, "a", 2, 10, t0 + 2)
    restore(tally, failed)
    expect(peekUsage(tally, "a", 10, t0 + 3).used).toBe(6) // no double count, no loss
    const retried = takeDeltas(tally, t0 + 4)
    expect(retried).toEqual([{ bucket: "a", window: 1000, delta: 6 }])
    settle(tally, retried, totals([["a", 1000, 6]]))
    expect(peekUsage(tally, "a", 10, t0 + 5).used).toBe(6)
  })

  it("flushes the previous window's last delta once, then drops it; older windows are dropped outright", () => {
    const tally: Tally = new Map()
    charge(tally, "old", 1, 10, t0 - windowMs) // two windows back by the time we sync
    charge(tally, "a", 3, 10, t0 + windowMs - 5)
    const rows = takeDeltas(tally, t0 + windowMs + 1)
    expect(rows).toEqual([{ bucket: "a", window: 1000, delta: 3 }])
    settle(tally, rows, totals([["a", 1000, 3]]))
    expect(dropEnded(tally, t0 + windowMs + 2)).toBe(1)
    expect(tally.size).toBe(0)
  })
})

describe("layerLocal", () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("consumes and peeks synchronously, rolls over at the minute and prunes ended windows", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    vi.setSystemTime(t0 + 59_000)
    const limiter = await Effect.runPromise(Effect.provide(RateLimiter, layerLocal))
    expect(limiter.consume("ip:1", 15, 20)).toEqual({ used: 15, limit: 20, allowed: true, retryAfterSec: 1 })
    expect(limiter.consume("ip:1", 10, 20)).toEqual({ used: 25, limit: 20, allowed: false, retryAfterSec: 1 })
    expect(limiter.peek("ip:1", 20).used).toBe(25)
    vi.setSystemTime(t0 + windowMs + 500)
    expect(limiter.peek("ip:1", 20)).toEqual({ used: 0, limit: 20, allowed: true, retryAfterSec: 60 })
    expect(limiter.consume("ip:1", 1, 20).used).toBe(1)
    expect(await Effect.runPromise(limiter.prune)).toBe(1)
    expect(limiter.peek("ip:1", 20).used).toBe(1)
  })
})
