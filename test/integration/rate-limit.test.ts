// Request weight limits: per key for signed calls, per IP for public ones, held in Postgres so
// two nodes share one budget.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { signedGet } from "../../harness/signed.ts"

let db: TestDatabase
let a: RunningNode
let b: RunningNode
const limits = { SHARDLINE_RATE_LIMIT_IP_WEIGHT: "20", SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "30" }

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
    await db.query("DELETE FROM rate_limit_windows")
    // 10 calls of weight 1 on each node: the shared budget of 20 is spent exactly.
    for (let i = 0; i < 10; i++) {
      expect((await fetch(`${a.baseUrl}/api/public/v1/time`)).status).toBe(200)
      expect((await fetch(`${b.baseUrl}/api/v3/time`)).status).toBe(200)
    }
    const last = await fetch(`${a.baseUrl}/api/public/v1/ping`)
    expect(last.status).toBe(429)
    expect(await last.json()).toEqual({
      code: -1003,
      msg: "Too much request weight used; current limit is 20 request weight per 1 MINUTE. Please use the SSE stream for live updates to avoid polling the API."
    })
    const retry = Number(last.headers.get("retry-after"))
    expect(retry).toBeGreaterThanOrEqual(1)
    expect(retry).toBeLessThanOrEqual(60)
    expect(last.headers.get("x-mbx-used-weight-1m")).toBe("21")
    expect((await fetch(`${b.baseUrl}/api/public/v1/time`)).status).toBe(429)
  })

  it("counts signed calls per key with the spec's weights (account = 10)", async () => {
    await awayFromMinuteEdge()
    await db.query("DELETE FROM rate_limit_windows")
    const key = await createKey(db.url, { scopes: ["read"] })
    const other = await createKey(db.url, { scopes: ["read"] })
    const used: Array<string | null> = []
    for (const node of [a, b, a]) {
      const r = await signedGet(node.baseUrl, "/api/public/v1/account", key)
      expect(r.status).toBe(200)
      used.push(r.headers.get("x-svc-used-weight-1m"))
    }
    expect(used).toEqual(["10", "20", "30"])
    const over = await signedGet(b.baseUrl, "/api/public/v1/account", key)
    expect(over.status).toBe(429)
    expect(((await over.json()) as { code: number }).code).toBe(-1003)
    // Another key has its own budget; the public per-IP budget is separate from both.
    expect((await signedGet(a.baseUrl, "/api/public/v1/account", other)).status).toBe(200)
    expect((await fetch(`${a.baseUrl}/api/public/v1/time`)).status).toBe(200)
  })
})
