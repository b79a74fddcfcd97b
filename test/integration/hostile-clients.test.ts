// Issue 27 ("hostile clients, round 2"): what a probe of the three listeners got through, each
// case against a real node. The seeded barrages are in hostile-input*.test.ts; these are the
// targeted cases, one describe per hole.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { signedGet } from "../../harness/signed.ts"
import { startNode, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  db = await createTestDatabase("hostilecl")
  node = await startNode(db.url, { SHARDLINE_TRUST_PROXY: "true", SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100" })
}, 60_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const v1 = "/api/public/v1"

describe("client IP behind a proxy (SHARDLINE_TRUST_PROXY=true, loopback trusted by default)", () => {
  it("an IP allowlist is not passed by writing the allowed IP first in X-Forwarded-For", async () => {
    const k = await createKey(db.url, { scopes: ["read"], ipAllowlist: ["10.9.9.9"] })
    const spoofed = await signedGet(node.baseUrl, `${v1}/account`, k, {}, { "X-Forwarded-For": "10.9.9.9, 203.0.113.7" })
    expect(spoofed.status).toBe(403)
    expect(((await spoofed.json()) as { code: number }).code).toBe(-1004)
    const real = await signedGet(node.baseUrl, `${v1}/account`, k, {}, { "X-Forwarded-For": "203.0.113.7, 10.9.9.9" })
    expect(real.status).toBe(200)
  })

  it("a client cannot beat the per-IP weight limit by changing the first X-Forwarded-For entry", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 110; i++) {
      const r = await fetch(`${node.baseUrl}${v1}/time`, { headers: { "x-forwarded-for": `10.${i >> 8}.${i & 255}.1, 198.51.100.77` } })
      statuses.push(r.status)
      await r.arrayBuffer()
    }
    expect(statuses.slice(0, 100).every((s) => s === 200)).toBe(true)
    expect(statuses.slice(100).every((s) => s === 429)).toBe(true)
    // The budget spent was 198.51.100.77's, not that of the addresses the client named.
    const other = await fetch(`${node.baseUrl}${v1}/time`, { headers: { "x-forwarded-for": "10.0.0.1" } })
    expect(other.status).toBe(200)
  })
})
