// Two RateLimiter nodes on one database: each answers from memory, and the background sync makes
// what one spends visible to the other within a few ticks; the weight admitted past a limit stays
// within the bound documented in src/platform/RateLimiter.ts; a sync that fails loses nothing.
import { Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestDatabase } from "../../harness/db.ts"
import { layer, RateLimiter, type RateLimiterShape, syncIntervalMs, windowMs, windowOf } from "../../src/platform/RateLimiter.ts"
import { migratedTestDatabase, pgClientLayer, sleep, within } from "../support/pg.ts"

let db: TestDatabase
const runtimes: Array<{ dispose: () => Promise<void> }> = []

/** One "node": its own PgClient and its own limiter with its sync fiber. */
const startNode = async (name: string): Promise<RateLimiterShape> => {
  const runtime = ManagedRuntime.make(layer.pipe(Layer.provide(pgClientLayer(db.url, `shardline:rl-${name}`))))
  runtimes.push(runtime)
  return runtime.runPromise(RateLimiter)
}

/** The burst must not straddle a minute: wait for a fresh one if less than `needMs` is left. */
const awayFromMinuteEdge = async (needMs: number) => {
  const left = windowMs - (Date.now() % windowMs)
  if (left < needMs) await sleep(left + 100)
}

const stored = async (bucket: string, table = "rate_limit_windows") => {
  const rows = await db.query<{ used: number }>(`SELECT used FROM ${table} WHERE bucket = $1 AND window_start = $2`, [bucket, windowOf(Date.now())])
  return rows[0]?.used ?? 0
}

let a: RateLimiterShape
let b: RateLimiterShape

beforeAll(async () => {
  db = await migratedTestDatabase("rls")
  a = await startNode("a")
  b = await startNode("b")
}, 60_000)
afterAll(async () => {
  for (const r of runtimes) await r.dispose()
  await db?.drop()
})

describe("rate-limit sync across nodes", () => {
  it("answers from memory at once, and a node sees another's spending within a second", async () => {
    await awayFromMinuteEdge(10_000)
    expect(a.consume("ip:seen", 5, 100)).toMatchObject({ used: 5, allowed: true })
    expect(a.consume("ip:seen", 10, 100).used).toBe(15)
    expect(b.consume("ip:seen", 1, 100).used).toBe(1) // B has not read A's weight yet
    const tookMs = await within(1000, () => b.peek("ip:seen", 100).used === 16 && a.peek("ip:seen", 100).used === 16)
    expect(tookMs).toBeLessThanOrEqual(1000)
    expect(await stored("ip:seen")).toBe(16)
    // B keeps reading a bucket back while it is recent, even with nothing of its own to write.
    a.consume("ip:seen", 4, 100)
    await within(1000, () => b.peek("ip:seen", 100).used === 20)
  })

  it("admits at most limit + (nodes - 1) * rate * (2 * interval + round trip) in a window", async () => {
    await awayFromMinuteEdge(10_000)
    const limit = 200
    const runMs = 2500
    const stepMs = 5
    const admitted = { a: 0, b: 0 }
    const charged = { a: 0, b: 0 }
    const hammer = async (name: "a" | "b", limiter: RateLimiterShape) => {
      const end = Date.now() + runMs
      while (Date.now() < end) {
        charged[name]++
        if (limiter.consume("ip:hammer", 1, limit).allowed) admitted[name]++
        await sleep(stepMs)
      }
    }
    await Promise.all([hammer("a", a), hammer("b", b)])
    const total = admitted.a + admitted.b
    // The rate a node really charged at (timers on a busy 2-core box run slower than asked).
    const ratePerMs = Math.max(charged.a, charged.b) / runMs
    const roundTripMs = 100 // generous for one statement on the local test server
    const bound = limit + (2 - 1) * ratePerMs * (2 * syncIntervalMs + roundTripMs)
    console.log(`admitted ${total} (a ${admitted.a}, b ${admitted.b}) of ${charged.a + charged.b} charged; limit ${limit}, bound ${bound.toFixed(0)}`)
    expect(total).toBeGreaterThanOrEqual(limit) // a view never overstates, so the limit is reached
    expect(total).toBeLessThanOrEqual(bound)
    expect(admitted.a).toBeGreaterThan(0)
    expect(admitted.b).toBeGreaterThan(0)
    // Refused calls are charged too: once synced, Postgres holds every call.
    await within(1000, async () => (await stored("ip:hammer")) === charged.a + charged.b)
  })

  it("keeps counting while Postgres refuses the sync, and writes the held-back weight once it works again", async () => {
    await awayFromMinuteEdge(10_000)
    a.consume("ip:outage", 10, 100)
    await within(1000, async () => (await stored("ip:outage")) === 10)
    await db.query("ALTER TABLE rate_limit_windows RENAME TO rate_limit_windows_away")
    try {
      expect(a.consume("ip:outage", 7, 100).used).toBe(17)
      await sleep(4 * syncIntervalMs) // several failed syncs
      expect(a.peek("ip:outage", 100).used).toBe(17)
      expect(await stored("ip:outage", "rate_limit_windows_away")).toBe(10)
    } finally {
      await db.query("ALTER TABLE rate_limit_windows_away RENAME TO rate_limit_windows")
    }
    await within(1500, async () => (await stored("ip:outage")) === 17)
    await sleep(2 * syncIntervalMs)
    expect(await stored("ip:outage")).toBe(17) // written once, not once per failed attempt
    expect(a.peek("ip:outage", 100).used).toBe(17)
  })
})
