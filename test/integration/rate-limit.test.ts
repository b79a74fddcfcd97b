// Request weight limits: per key for signed calls, per IP for public ones. Each node counts in
// memory and reconciles through Postgres in the background (src/platform/RateLimiter.ts), so two
// nodes share one budget once a sync has run: the test waits `settle` between nodes.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { signedGet } from "../../harness/signed.ts"
import { syncIntervalMs } from "../../src/platform/RateLimiter.ts"

let db: TestDatabase
let a: RunningNode
let b: RunningNode
// Trusting X-Forwarded-For gives each test its own client IP, hence its own fresh bucket.
const limits = {
  SHARDLINE_RATE_LIMIT_IP_WEIGHT: "20", SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "30", SHARDLINE_TRUST_PROXY: "true",
  SHARDLINE_DESK_RATE_LIMIT_IP_WEIGHT: "15", SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "12", SHARDLINE_DESK_PUBLIC_IP_WEIGHT: "40"
}
const from = (ip: string) => ({ headers: { "x-forwarded-for": ip } })
/** An unknown path on the desk and social listeners: a 404 in their shape, charged weight 1 like any call. */
const nope = "/api/public/v1/nope"

/**
 * Until Postgres holds `total` for the bucket (every node wrote its weight), then a few more sync
 * intervals for every node to read it back. Waiting on the row, not on a fixed time, keeps this
 * true on a loaded machine, where a 250 ms tick can run late.
 */
const settle = async (bucket: string, total: number) => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const [row] = await db.query<{ used: number | null }>(
      "SELECT sum(used)::int AS used FROM rate_limit_windows WHERE bucket = $1 AND window_start = (SELECT max(window_start) FROM rate_limit_windows WHERE bucket = $1)",
      [bucket])
    if ((row?.used ?? 0) >= total) break
    if (Date.now() > deadline) throw new Error(`${bucket} did not reach ${total} in Postgres within 20 s (at ${row?.used})`)
    await new Promise((r) => setTimeout(r, syncIntervalMs))
  }
  await new Promise((r) => setTimeout(r, 4 * syncIntervalMs))
}

/** Windows are calendar minutes; start a burst well inside one so it cannot straddle two. */
const awayFromMinuteEdge = async () => {
  const into = Date.now() % 60_000
  if (into > 50_000) await new Promise((r) => setTimeout(r, 60_000 - into + 200))
}

beforeAll(async () => {
  db = await createTestDatabase("rl")
  a = await startNode(db.url, limits)
  b = await startNode(db.url, limits)
}, 90_000)
afterAll(async () => {
  await a?.stop()
  await b?.stop()
  await db?.drop()
})

describe("request weight", () => {
  it("refuses public calls past the per-IP budget with 429, -1003 and Retry-After, across nodes", async () => {
    await awayFromMinuteEdge()
    const ip = "203.0.113.1"
    // 10 calls of weight 1 on each node: the shared budget of 20 is spent exactly.
    for (let i = 0; i < 10; i++) expect((await fetch(`${a.baseUrl}/api/public/v1/time`, from(ip))).status).toBe(200)
    for (let i = 0; i < 10; i++) expect((await fetch(`${b.baseUrl}/api/v3/time`, from(ip))).status).toBe(200)
    await settle(`ip:exchange:${ip}`, 20)
    const last = await fetch(`${a.baseUrl}/api/public/v1/ping`, from(ip))
    expect(last.status).toBe(429)
    expect(await last.json()).toEqual({
      code: -1003,
      msg: "Too much request weight used; current limit is 20 request weight per 1 MINUTE. Please use the SSE stream for live updates to avoid polling the API."
    })
    const retry = Number(last.headers.get("retry-after"))
    expect(retry).toBeGreaterThanOrEqual(1)
    expect(retry).toBeLessThanOrEqual(60)
    expect(last.headers.get("x-mbx-used-weight-1m")).toBe("21")
    expect((await fetch(`${b.baseUrl}/api/public/v1/time`, from(ip))).status).toBe(429)
  })

  it("a concurrent batch on one node: exactly `limit` pass, and each call sees its own position", async () => {
    // A limiter that charged a batch at once and answered every call with the batch total (or
    // let all of it through) passed the sequential tests; this one would not.
    await awayFromMinuteEdge()
    const limit = Number(limits.SHARDLINE_RATE_LIMIT_IP_WEIGHT)
    const calls = limit + 10
    const ip = "203.0.113.30"
    const responses = await Promise.all(Array.from({ length: calls }, (_, i) =>
      fetch(`${a.baseUrl}/api/public/v1/${i % 2 === 0 ? "time" : "ping"}`, from(ip))))
    expect(responses.filter((r) => r.status === 200)).toHaveLength(limit)
    expect(responses.filter((r) => r.status === 429)).toHaveLength(calls - limit)
    const used = responses.map((r) => Number(r.headers.get("x-mbx-used-weight-1m"))).sort((x, y) => x - y)
    expect(used).toEqual(Array.from({ length: calls }, (_, i) => i + 1))
    // The ones that passed are exactly the first `limit` positions.
    const passed = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get("x-mbx-used-weight-1m")))
    expect(passed.sort((x, y) => x - y)).toEqual(Array.from({ length: limit }, (_, i) => i + 1))
    await Promise.all(responses.map((r) => r.arrayBuffer()))
  })

  it("counts signed calls per key with the spec's weights (account = 10)", async () => {
    await awayFromMinuteEdge()
    const key = await createKey(db.url, { scopes: ["read"] })
    const other = await createKey(db.url, { scopes: ["read"] })
    const used: Array<string | null> = []
    // Signed calls count against the client IP too (budget 20 here), so each comes from its own.
    for (const [i, node] of [a, b, a].entries()) {
      const r = await signedGet(node.baseUrl, "/api/public/v1/account", key, {}, from(`203.0.113.${10 + i}`).headers)
      expect(r.status).toBe(200)
      used.push(r.headers.get("x-svc-used-weight-1m"))
      await settle(`key:${key.apiKey}`, 10 * (i + 1))
    }
    // B's first call knows only its own weight (a bucket new to a node is read back at its next
    // sync); from then on each node sees the shared total.
    expect(used).toEqual(["10", "10", "30"])
    const over = await signedGet(b.baseUrl, "/api/public/v1/account", key, {}, from("203.0.113.20").headers)
    expect(over.status).toBe(429)
    expect(((await over.json()) as { code: number }).code).toBe(-1003)
    // Another key has its own budget; the public per-IP budget is separate from both.
    expect((await signedGet(a.baseUrl, "/api/public/v1/account", other, {}, from("203.0.113.21").headers)).status).toBe(200)
    expect((await fetch(`${a.baseUrl}/api/public/v1/time`)).status).toBe(200)
  })

  it("each listener keeps its own per-IP budget: social and desk calls spend nothing of the exchange's (issue 23.3)", async () => {
    await awayFromMinuteEdge()
    const ip = "203.0.113.40"
    for (let i = 0; i < 5; i++) expect((await fetch(`${a.socialUrl}${nope}`, from(ip))).status).toBe(404)
    const exchange = await fetch(`${a.baseUrl}/api/public/v1/time`, from(ip))
    expect(exchange.headers.get("x-svc-used-weight-1m")).toBe("1")
    const desk = await fetch(`${a.deskUrl}${nope}`, from(ip))
    expect(desk.headers.get("ratelimit-limit")).toBe("15")
    expect(desk.headers.get("ratelimit-remaining")).toBe("14")
    // The exchange's budget spent to the last unit: the desk and social still answer this client.
    for (let i = 0; i < 19; i++) expect((await fetch(`${a.baseUrl}/api/public/v1/time`, from(ip))).status).toBe(200)
    expect((await fetch(`${a.baseUrl}/api/public/v1/time`, from(ip))).status).toBe(429)
    const social = await fetch(`${a.socialUrl}${nope}`, from(ip))
    expect(social.status).toBe(404)
    expect(social.headers.get("ratelimit-remaining")).toBe("6") // 12 - its own 6 calls
    expect((await fetch(`${a.deskUrl}${nope}`, from(ip))).headers.get("ratelimit-remaining")).toBe("13")
    // What the nodes share through Postgres is per listener too.
    await settle(`ip:social:${ip}`, 6)
    await settle(`ip:exchange:${ip}`, 21)
  })

  it("desk transparency and registries: a fair-use ceiling of their own, not the partner budget (issue 23.3)", async () => {
    await awayFromMinuteEdge()
    const ip = "203.0.113.41"
    // A partner spends its whole budget; the public reads still answer the same IP.
    for (let i = 0; i < 15; i++) expect((await fetch(`${a.deskUrl}${nope}`, from(ip))).status).toBe(404)
    const refused = await fetch(`${a.deskUrl}${nope}`, from(ip))
    expect(refused.status).toBe(429)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limited")
    const paths = ["/api/public/reserves", "/api/public/reserves/history", "/api/public/supply", "/api/public/status", "/api/public/v1/stables/assets", "/api/public/v1/wrap/assets"]
    const statuses: Array<number> = []
    for (let i = 0; i < 40; i++) {
      const r = await fetch(`${a.deskUrl}${paths[i % paths.length]}`, from(ip))
      statuses.push(r.status)
      if (i === 0) {
        expect(r.headers.get("ratelimit-limit")).toBe("40")
        expect(r.headers.get("ratelimit-remaining")).toBe("39")
        expect(r.headers.get("cache-control")).toBe("public, max-age=30")
      }
      await r.arrayBuffer()
    }
    expect(statuses.every((s) => s === 200)).toBe(true)
    // Past the ceiling: 429 in the desk's shape, naming the fair-use limit.
    const over = await fetch(`${a.deskUrl}/api/public/reserves`, from(ip))
    expect(over.status).toBe(429)
    expect(((await over.json()) as { error: { message: string } }).error.message).toContain("40")
    // ...and the public reads spent nothing of the partner budget (still 429 from its own 16).
    expect((await fetch(`${a.deskUrl}${nope}`, from(ip))).headers.get("ratelimit-remaining")).toBe("0")
    const fresh = await fetch(`${a.deskUrl}${nope}`, from("203.0.113.42"))
    expect(fresh.headers.get("ratelimit-remaining")).toBe("14")
  }, 120_000)
})
