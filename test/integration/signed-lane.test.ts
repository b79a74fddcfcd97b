// The signed lane (src/exchange/http/SignedLane.ts): POST/DELETE /order, account, openOrders and
// GET /order answered by the edge in node:http must answer exactly as the HttpApi path does. Two
// nodes (each on its own database), one with the fast lane on and one with it off, get the same requests;
// status, used-weight headers and bodies (less the clock's fields) must be equal, and the lane must
// have taken every request of the fast node whose key it had cached.
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sign } from "../../src/exchange/auth/signature.ts"
import { signedLaneCounts } from "../../src/exchange/http/SignedLane.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { signedQuery, type Key } from "../../harness/signed.ts"
import { startNode, type RunningNode } from "../support/node.ts"

// Each node on its own database: two single-runner nodes on one database contend for the same
// shard locks, and the one that loses them answers nothing.
let fastDb: TestDatabase
let slowDb: TestDatabase
let fast: RunningNode
let slow: RunningNode
const v1 = "/api/public/v1"

beforeAll(async () => {
  ;[fastDb, slowDb] = await Promise.all([createTestDatabase("signedlane_fast"), createTestDatabase("signedlane_slow")])
  fast = await startNode(fastDb.url, { SHARDLINE_HTTP_FAST_LANE: "true", SHARDLINE_HTTP_SIGNED_LANE: "true" })
  slow = await startNode(slowDb.url, { SHARDLINE_HTTP_FAST_LANE: "false" })
}, 180_000)
afterAll(async () => {
  await fast?.stop()
  await slow?.stop()
  await fastDb?.drop()
  await slowDb?.drop()
})

interface Reply {
  readonly status: number
  readonly used: string | undefined
  readonly retryAfter: string | undefined
  readonly body: unknown
}

/** Each node's calls come from its own loopback address, so each has an IP budget of its own.
 * The used-weight headers can be compared. */
const fromOf = (baseUrl: string) => (baseUrl === fast.baseUrl ? "127.0.0.2" : "127.0.0.3")

const call = (baseUrl: string, method: string, path: string, headers: Record<string, string>, body = "") =>
  new Promise<Reply>((resolve, reject) => {
    const url = new URL(baseUrl)
    const req = request({ host: url.hostname, port: url.port, method, path, agent: false, localAddress: fromOf(baseUrl), headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString()
        resolve({ status: res.statusCode ?? 0, used: res.headers["x-mbx-used-weight-1m"] as string | undefined, retryAfter: res.headers["retry-after"] as string | undefined, body: JSON.parse(text) })
      })
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

/** The clock's fields differ between two answers a few ms apart, and each node has its own user; nothing else may. */
const stable = (body: unknown): unknown =>
  JSON.parse(JSON.stringify(body, (k, v) => (["updateTime", "transactTime", "time", "workingTime", "uid"].includes(k) ? 0 : v)))

type Case = readonly [string, (key: Key, base: string) => Promise<Reply>]

const form = (key: Key, method: string, path: string, text: string) => (base: string) =>
  call(base, method, path, { "x-mbx-apikey": key.apiKey, "content-type": "application/x-www-form-urlencoded" }, `${text}&signature=${sign(key.secretKey, text)}`)
const query = (key: Key, method: string, path: string, params: Record<string, string | number>, headers: Record<string, string> = {}) => (base: string) =>
  call(base, method, `${v1}${path}?${signedQuery(key, params)}`, { "x-mbx-apikey": key.apiKey, ...headers })

const cases: ReadonlyArray<Case> = [
  ["account", (k, b) => query(k, "GET", "/account", {})(b)],
  ["account, wrong signature", (k, b) => call(b, "GET", `${v1}/account?timestamp=${Date.now()}&signature=${"0".repeat(64)}`, { "x-mbx-apikey": k.apiKey })],
  ["account, stale timestamp", (k, b) => query(k, "GET", "/account", { timestamp: Date.now() - 60_000 })(b)],
  ["account, recvWindow too large", (k, b) => query(k, "GET", "/account", { recvWindow: 70_000 })(b)],
  ["openOrders, all", (k, b) => query(k, "GET", "/openOrders", {})(b)],
  ["openOrders, bad symbol text", (k, b) => query(k, "GET", "/openOrders", { symbol: "!!" })(b)],
  ["openOrders, unknown symbol", (k, b) => query(k, "GET", "/openOrders", { symbol: "NOPEDUSD" })(b)],
  ["GET /order, unknown id", (k, b) => query(k, "GET", "/order", { orderId: "123456789" })(b)],
  ["GET /order, no ref", (k, b) => query(k, "GET", "/order", {})(b)],
  ["POST /order, unknown symbol, query", (k, b) => query(k, "POST", "/order", { symbol: "NOPEDUSD", side: "BUY", price: "1", quantity: "1" })(b)],
  ["POST /order, connector: query and an empty JSON body", (k, b) => query(k, "POST", "/order", { symbol: "NOPEDUSD", side: "BUY", price: "1", quantity: "1" }, { "content-type": "application/json" })(b)],
  ["POST /order, unknown symbol, form body", (k, b) => form(k, "POST", `${v1}/order`, `symbol=NOPEDUSD&side=BUY&price=1&quantity=1&timestamp=${Date.now()}`)(b)],
  ["POST /order, Binance totalParams (query then body, no '&')", (k, b) => {
    const q = "symbol=NOPEDUSD&side=BUY"
    const body = `price=1&quantity=1&timestamp=${Date.now()}`
    return call(b, "POST", `${v1}/order?${q}`, { "x-mbx-apikey": k.apiKey, "content-type": "application/x-www-form-urlencoded" }, `${body}&signature=${sign(k.secretKey, q + body)}`)
  }],
  ["POST /order, re-cut inside a pair", (k, b) => {
    const text = `symbol=NOPEDUSD&side=BUY&price=10&quantity=1&timestamp=${Date.now()}`
    const cut = text.indexOf("price=1") + "price=1".length
    return call(b, "POST", `${v1}/order?${text.slice(0, cut)}`, { "x-mbx-apikey": k.apiKey, "content-type": "application/x-www-form-urlencoded" }, `${text.slice(cut)}&signature=${sign(k.secretKey, text)}`)
  }],
  ["POST /order, bad side", (k, b) => query(k, "POST", "/order", { symbol: "SHRDDUSD", side: "HOLD", price: "1", quantity: "1" })(b)],
  ["POST /order, missing quantity", (k, b) => query(k, "POST", "/order", { symbol: "SHRDDUSD", side: "BUY", price: "1" })(b)],
  ["POST /order, duplicate price", (k, b) => form(k, "POST", `${v1}/order`, `symbol=SHRDDUSD&side=BUY&price=1&price=2&quantity=1&timestamp=${Date.now()}`)(b)],
  ["POST /order, bad tick (refused in the batch)", (k, b) => query(k, "POST", "/order", { symbol: "SHRDDUSD", side: "BUY", price: "1.00001", quantity: "1", newClientOrderId: `tick${b.length}` })(b)],
  ["POST /order, not authorized (refused in the batch)", (k, b) => query(k, "POST", "/order", { symbol: "SHRDDUSD", side: "BUY", price: "1", quantity: "1", newClientOrderId: `auth${b.length}` })(b)],
  ["DELETE /order, unknown id", (k, b) => query(k, "DELETE", "/order", { symbol: "SHRDDUSD", orderId: "123456789" })(b)],
  ["DELETE /order, missing ref", (k, b) => query(k, "DELETE", "/order", { symbol: "SHRDDUSD" })(b)]
]

describe("the signed lane answers as the HttpApi path does", () => {
  it("same status, used weight and body for every case; the lane took the fast node's requests", { timeout: 600_000 }, async () => {
    // One key per node, so each node's key budget sees the same calls (the weights must match too).
    const keys = await Promise.all([fastDb, slowDb].map((d) => createKey(d.url, { scopes: ["read", "trade"] })))
    // The first call of a key looks it up (the lane leaves an uncached key to the HttpApi path).
    for (const [i, node] of [fast, slow].entries()) expect((await query(keys[i]!, "GET", "/account", {})(node.baseUrl)).status).toBe(200)
    const taken0 = signedLaneCounts.taken
    for (const [name, send] of cases) {
      const [a, b] = [await send(keys[0]!, fast.baseUrl), await send(keys[1]!, slow.baseUrl)]
      expect({ name, status: a.status, used: a.used, body: stable(a.body) }).toEqual({ name, status: b.status, used: b.used, body: stable(b.body) })
      expect(a.status, name).toBeLessThan(500)
    }
    expect(signedLaneCounts.taken - taken0).toBe(cases.length)
  })

  it("refuses what the key may not do alike: read-only key on POST/DELETE, an IP outside the allowlist, the key's weight", { timeout: 600_000 }, async () => {
    for (const [scopes, allow] of [[["read"], []], [["read", "trade"], ["10.9.9.9"]]] as const) {
      const keys = await Promise.all([fastDb, slowDb].map((d) => createKey(d.url, { scopes: [...scopes], ipAllowlist: [...allow] })))
      for (const [i, node] of [fast, slow].entries()) await query(keys[i]!, "GET", "/account", {})(node.baseUrl)
      for (const send of [query, query]) {
        const [a, b] = await Promise.all([
          send(keys[0]!, "POST", "/order", { symbol: "SHRDDUSD", side: "BUY", price: "1", quantity: "1" })(fast.baseUrl),
          send(keys[1]!, "POST", "/order", { symbol: "SHRDDUSD", side: "BUY", price: "1", quantity: "1" })(slow.baseUrl)
        ])
        expect(a).toEqual(b)
        expect([401, 403]).toContain(a.status)
      }
    }
  })
})
