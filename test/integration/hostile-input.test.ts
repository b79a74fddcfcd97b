// Seeded random hostile requests against a real node: junk methods, paths, query strings (bad
// percent escapes, invalid UTF-8, duplicates, huge values), bodies and headers, half of them
// validly signed around the junk so they reach the handlers. Whatever comes in, the answer is
// never a 500 and never a stack trace, and under the exchange prefixes every error is a
// Binance body {code, msg}. fast-check prints the seed and the shrunk request on a failure.
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sign } from "../../src/exchange/auth/signature.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { rawBody, rawSocket, sendRaw } from "../support/http.ts"
import { startNode, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode
let key: { apiKey: string; secretKey: string }

beforeAll(async () => {
  db = await createTestDatabase("hostile")
  node = await startNode(db.url, { SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "10000000", SHARDLINE_RATE_LIMIT_IP_WEIGHT: "10000000" })
  key = await createKey(db.url, { scopes: ["read", "trade"] })
})
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const prefixes = ["/api/public/v1", "/api/v3", ""]
const routes = ["", "/", "/ops", "/metrics", "/api-docs", "/api-docs/swagger-ui.css", "/ping", "/time", "/account", "/order", "/allOrders", "/myTrades", "/openapi.json", "/depth", "/exchangeInfo", "/%2e%2e/ops", "/../../etc/passwd", "/order/", "/ORDER", "/nope",
  // Issue 24: the web app and the session routes it is built on.
  "/api/app/keys", "/api/app/keys/x", "/api/app/authorizations", "/api/app/authorizations/SHRD/end", "/api/app/activity", "/sessions/abc",
  "/api/public/auth/wallet-challenge", "/api/public/auth/wallet-callback", "/api/public/auth/wallet-exchange", "/api/public/auth/sign-out", "/app/", "/app/sign-in", "/favicon.ico"]
const names = ["timestamp", "signature", "recvWindow", "symbol", "side", "type", "price", "quantity", "timeInForce", "orderId", "origClientOrderId", "newClientOrderId", "limit", "startTime", "endTime", "fromId", "x"]
const junkValues = fc.oneof(
  fc.constantFrom("", "0", "-1", "1e309", "NaN", "0x10", "99999999999999999999999", "1.5", "BTC_USDT", "%", "%zz", "%ff%fe", "%00", "%E2%82", "+", "&", "=", "a=b", "[]", "{}", "null"),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.integer().map(String),
  fc.constant("9".repeat(5000)),
  fc.constantFrom("9223372036854775807", "9223372036854775808", "18446744073709551615"), // past a bigint (issue 27: -1001 before)
  fc.constant(String(Date.now()))
)
const pair = fc.tuple(fc.constantFrom(...names), junkValues).map(([k, v]) => `${k}=${v}`)
const query = fc.array(fc.oneof(pair, fc.constantFrom("&&", "=", "timestamp", "signature=", "%=%")), { maxLength: 8 }).map((ps) => ps.join("&"))

const hostileRequest = fc.record({
  method: fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"),
  prefix: fc.constantFrom(...prefixes),
  route: fc.oneof(fc.constantFrom(...routes), fc.string({ maxLength: 20 }).map((s) => "/" + encodeURIComponent(s))),
  query,
  body: fc.oneof(
    fc.constant(Buffer.alloc(0)),
    query.map((q) => Buffer.from(q)),
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    fc.constantFrom(Buffer.from("{"), Buffer.from("{\"a\":1}"), Buffer.from("[]"), Buffer.from("null"), Buffer.from([0xff, 0xfe, 0x00]))
  ),
  contentType: fc.constantFrom(undefined, "application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", "application/json; charset=latin1", "*/*"),
  apiKey: fc.constantFrom(undefined, "valid", "", "junk", "A".repeat(5000), "é"),
  signIt: fc.boolean(),
  // Issue 27: protocol upgrades and expectations (500 and empty 417 before).
  extra: fc.constantFrom<Record<string, string>>({}, {}, {}, { connection: "Upgrade", upgrade: "websocket" }, { expect: "200-ok" }, { upgrade: "h2c", connection: "Upgrade" })
})

/** Appends a valid timestamp and signature around the junk (query wins over body), so half the requests pass auth. */
const signed = (q: string, body: Buffer) => {
  const base = q === "" ? `timestamp=${Date.now()}` : `${q}&timestamp=${Date.now()}`
  return `${base}&signature=${sign(key.secretKey, base + body.toString("latin1"))}`
}

const stackTrace = /\n\s+at |\.ts:\d+|node:internal|Error: |FiberFailure/

describe("hostile input", () => {
  it("never answers 500 or a stack trace; exchange errors are always {code, msg}", async () => {
    await fc.assert(
      fc.asyncProperty(hostileRequest, async (r) => {
        const q = r.signIt ? signed(r.query, r.body) : r.query
        const path = `${r.prefix}${r.route}${q === "" ? "" : "?" + q}`
        const headers: Record<string, string> = { ...r.extra }
        if (r.contentType !== undefined) headers["content-type"] = r.contentType
        if (r.apiKey !== undefined) headers["x-mbx-apikey"] = r.apiKey === "valid" ? key.apiKey : r.apiKey === "é" ? "\u00e9" : r.apiKey
        const reply = await sendRaw(node.baseUrl, r.method, path, headers, r.body)
        expect(reply.status).not.toBe(500)
        expect([200, 400, 401, 403, 404, 405, 413, 415, 417, 429, 431, 503]).toContain(reply.status)
        // Success pages may carry code (the docs page ships swagger-ui's JavaScript); errors never do.
        if (reply.status >= 400) expect(reply.body).not.toMatch(stackTrace)
        const exchangePath = r.prefix !== "" || r.route === "" || r.route === "/"
        if (reply.status >= 400 && r.method !== "HEAD" && exchangePath) {
          expect(reply.contentType).toContain("application/json")
          const parsed = JSON.parse(reply.body) as { code: unknown; msg: unknown }
          expect(Object.keys(parsed).sort()).toEqual(["code", "msg"])
          expect(Number.isInteger(parsed.code) && (parsed.code as number) < 0).toBe(true)
          expect(typeof parsed.msg).toBe("string")
        }
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 1500), seed: Number(process.env.HOSTILE_SEED ?? 20261122), verbose: 1 }
    )
  }, 120_000)

  it("answers requests node:http refuses before any handler with the same {code, msg} body", async () => {
    const raw = (bytes: string) => rawSocket(node.baseUrl, bytes)
    const garbage = await raw("NOT HTTP AT ALL\r\n\r\n")
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /)
    expect(rawBody(garbage)).toBe(JSON.stringify({ code: -1102, msg: "Malformed request." }))
    const long = `GET /api/public/v1/time?x=${"a".repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`
    const tooLarge = await raw(long)
    expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /)
    expect(JSON.parse(rawBody(tooLarge))).toEqual({ code: -1102, msg: "Request line or headers too large." })
    const headTooLarge = await raw("HEAD" + long.slice(3))
    expect(headTooLarge).toMatch(/^HTTP\/1\.1 431 /)
    expect(headTooLarge.endsWith("\r\n\r\n")).toBe(true) // no body after a HEAD
  })

  it("still answers normally after the barrage", async () => {
    const r = await fetch(`${node.baseUrl}/api/public/v1/ping`)
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({})
  })
})
