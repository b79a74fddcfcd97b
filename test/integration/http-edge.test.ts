// The HTTP edge in front of the exchange, as a hostile probe found it and as it must be now: the
// signature boundary, lockout by someone who knows a key id, signed calls counted per IP, the docs
// page and ops limited and cached, and answers with a body where node:http gave none. Clients on
// different loopback addresses (127.0.0.x) stand for different IPs.
import { request } from "node:http"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sign } from "../../src/exchange/auth/signature.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { signedQuery, type Key } from "../../harness/signed.ts"

let db: TestDatabase
let node: RunningNode
let fast: RunningNode
let slow: RunningNode
const v1 = "/api/public/v1"
const limits = { SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100", SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "60" }

beforeAll(async () => {
  db = await createTestDatabase("edge")
  node = await startNode(db.url, limits)
  fast = await startNode(db.url, { SHARDLINE_HTTP_FAST_LANE: "true" })
  slow = await startNode(db.url, { SHARDLINE_HTTP_FAST_LANE: "false" })
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await fast?.stop()
  await slow?.stop()
  await db?.drop()
})

interface Reply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

/** One request from a chosen loopback address, raw enough to send what fetch would refuse. */
const call = (baseUrl: string, from: string, method: string, path: string, headers: Record<string, string> = {}, body = "") =>
  new Promise<Reply>((resolve, reject) => {
    const url = new URL(baseUrl)
    const req = request({ host: url.hostname, port: url.port, method, path, localAddress: from, agent: false, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

const account = (key: Key, from: string, mutate: (q: string) => string = (q) => q) =>
  call(node.baseUrl, from, "GET", `${v1}/account?${mutate(signedQuery(key, {}))}`, { "x-mbx-apikey": key.apiKey })

describe("the signature covers exactly what the handler reads", () => {
  it("refuses a captured order re-cut at another query/body boundary (…&price=1 | 0&quantity=5…)", async () => {
    const trader = await createKey(db.url, { scopes: ["read", "trade"] })
    const signedText = `symbol=NOPEUSDT&side=BUY&price=10&quantity=5&timestamp=${Date.now()}`
    const signature = sign(trader.secretKey, signedText)
    const headers = { "x-mbx-apikey": trader.apiKey, "content-type": "application/x-www-form-urlencoded" }
    // As signed: all in the body. The handler gets to the symbol check.
    const honest = await call(node.baseUrl, "127.0.0.1", "POST", `${v1}/order`, headers, `${signedText}&signature=${signature}`)
    expect(JSON.parse(honest.body)).toEqual({ code: -1121, msg: "Invalid symbol." })
    // Re-cut inside `price=10`: the query would read price=1. Refused before any handler.
    const cut = signedText.indexOf("price=1") + "price=1".length
    const recut = await call(node.baseUrl, "127.0.0.1", "POST", `${v1}/order?${signedText.slice(0, cut)}`, headers, `${signedText.slice(cut)}&signature=${signature}`)
    expect(recut.status).toBe(400)
    expect(JSON.parse(recut.body).code).toBe(-1102)
    // A repeated parameter is refused with -1101 and a clean message, not a schema dump.
    const dupText = `symbol=NOPEUSDT&side=BUY&price=1&price=10&quantity=5&timestamp=${Date.now()}`
    const dup = await call(node.baseUrl, "127.0.0.1", "POST", `${v1}/order`, headers, `${dupText}&signature=${sign(trader.secretKey, dupText)}`)
    expect(JSON.parse(dup.body)).toEqual({ code: -1101, msg: "Duplicate values for parameter 'price'." })
  })

  it("decodes the signed parameters by the endpoint's schema: bad enum -1100, missing -1102, never a 500", async () => {
    const trader = await createKey(db.url, { scopes: ["read", "trade"] })
    const headers = { "x-mbx-apikey": trader.apiKey }
    const side = await call(node.baseUrl, "127.0.0.10", "POST", `${v1}/order?${signedQuery(trader, { symbol: "NOPEUSDT", side: "HOLD", price: "1", quantity: "1" })}`, headers)
    expect(side.status).toBe(400)
    expect(JSON.parse(side.body)).toEqual({ code: -1100, msg: "Illegal characters found in parameter 'side'; legal range is 'BUY, SELL'." })
    // One value that reads like the decoder's text for a repeated one is not a duplicate (-1101).
    const another = await createKey(db.url, { scopes: ["read", "trade"] }) // the key's own weight budget
    const lookalike = await call(node.baseUrl, "127.0.0.13", "POST", `${v1}/order?${signedQuery(another, { symbol: "NOPEUSDT", side: "actual [", price: "1", quantity: "1" })}`, { "x-mbx-apikey": another.apiKey })
    expect(JSON.parse(lookalike.body)).toEqual({ code: -1100, msg: "Illegal characters found in parameter 'side'; legal range is 'BUY, SELL'." })
    const price = await call(node.baseUrl, "127.0.0.10", "POST", `${v1}/order?${signedQuery(trader, { symbol: "NOPEUSDT", side: "BUY", price: "1e5", quantity: "1" })}`, headers)
    expect(JSON.parse(price.body).code).toBe(-1100)
    const missing = await call(node.baseUrl, "127.0.0.10", "POST", `${v1}/order?${signedQuery(trader, { symbol: "NOPEUSDT", side: "BUY", quantity: "1" })}`, headers)
    expect(JSON.parse(missing.body)).toEqual({ code: -1102, msg: "Mandatory parameter 'price' was not sent, was empty/null, or malformed." })
  })
})

describe("weight budgets", () => {
  it("charges failed auth to the caller's IP, not the key: 125 unsigned calls with a known key do not lock its owner out", async () => {
    const victim = await createKey(db.url, { scopes: ["read"] })
    const statuses: Array<number> = []
    for (let i = 0; i < 125; i++) {
      statuses.push((await account(victim, "127.0.0.2", (q) => q.replace(/signature=[0-9a-f]+/, `signature=${"0".repeat(64)}`))).status)
    }
    expect(statuses.slice(0, 10).every((s) => s === 400)).toBe(true) // -1022 until the attacker's IP budget (100) is spent
    expect(statuses.at(-1)).toBe(429)
    const own = await account(victim, "127.0.0.3")
    expect(own.status).toBe(200)
    expect(own.headers["x-mbx-used-weight-1m"]).toBe("10") // the key's budget: only its own call
  })

  it("counts signed calls against the IP too: two keys from one IP share its budget", async () => {
    const a = await createKey(db.url, { scopes: ["read"] })
    const b = await createKey(db.url, { scopes: ["read"] })
    for (let i = 0; i < 5; i++) {
      expect((await account(a, "127.0.0.4")).status).toBe(200)
      expect((await account(b, "127.0.0.4")).status).toBe(200)
    }
    const over = await account(a, "127.0.0.4") // key a has used 50 of 60; the IP 100 of 100
    expect(over.status).toBe(429)
    expect(JSON.parse(over.body).code).toBe(-1003)
    expect(Number(over.headers["retry-after"])).toBeGreaterThanOrEqual(1)
    expect((await account(a, "127.0.0.5")).status).toBe(200) // same key, another IP
  })

  it("lists both budgets in exchangeInfo's rateLimits", async () => {
    const info = JSON.parse((await call(node.baseUrl, "127.0.0.6", "GET", `${v1}/exchangeInfo`)).body) as { rateLimits: Array<{ limit: number; scope: string }> }
    expect(info.rateLimits).toEqual(expect.arrayContaining([
      expect.objectContaining({ rateLimitType: "REQUEST_WEIGHT", limit: 100, scope: "IP" }),
      expect.objectContaining({ rateLimitType: "REQUEST_WEIGHT", limit: 60, scope: "KEY" })
    ]))
  })

  it("limits the docs page and ops like any route, and serves the docs page cached (ETag, gzip, 304)", async () => {
    const first = await call(node.baseUrl, "127.0.0.7", "GET", "/api-docs", { "accept-encoding": "gzip" })
    expect(first.status).toBe(200)
    const second = await call(node.baseUrl, "127.0.0.7", "GET", "/api-docs", { "accept-encoding": "gzip" })
    expect(second.headers["content-encoding"]).toBe("gzip")
    const etag = String(second.headers.etag)
    expect(etag).toMatch(/^".+"$/)
    const notModified = await call(node.baseUrl, "127.0.0.7", "GET", "/api-docs", { "if-none-match": etag })
    expect(notModified.status).toBe(304)
    // weight 20 each: 3 calls used 60 of 100; two more pass, the sixth is refused
    expect((await call(node.baseUrl, "127.0.0.7", "GET", "/api-docs")).status).toBe(200)
    expect((await call(node.baseUrl, "127.0.0.7", "GET", "/ops")).status).toBe(200)
    const refused = await call(node.baseUrl, "127.0.0.7", "GET", "/api-docs")
    expect(refused.status).toBe(429)
    expect(JSON.parse(refused.body).code).toBe(-1003)
    const unknown = await call(node.baseUrl, "127.0.0.7", "GET", "/nope")
    expect(unknown.status).toBe(429) // unknown paths are charged too
  })
})

const raw = (baseUrl: string, bytes: string | Buffer, after?: (socket: import("node:net").Socket) => void) =>
  new Promise<string>((resolve, reject) => {
    const url = new URL(baseUrl)
    const socket = connect({ port: Number(url.port), host: url.hostname, localAddress: "127.0.0.8" }, () => {
      socket.write(bytes)
      after?.(socket)
    })
    let out = ""
    socket.on("data", (c: Buffer) => (out += c.toString("latin1")))
    socket.on("close", () => resolve(out))
    socket.on("error", (e) => (out === "" ? reject(e) : resolve(out)))
  })

const bodyOf = (response: string) => response.slice(response.indexOf("\r\n\r\n") + 4)

describe("answers with a body where node:http gave none", () => {
  it("answers HTTP/1.1 without Host in the exchange's shape", async () => {
    const r = await raw(node.baseUrl, `GET ${v1}/nope HTTP/1.1\r\nconnection: close\r\n\r\n`)
    expect(r).toMatch(/^HTTP\/1\.1 404 /)
    expect(JSON.parse(bodyOf(r))).toEqual({ code: -1020, msg: "This operation is not supported." })
  })

  it("answers CONNECT with 405 and a body instead of dropping the socket", async () => {
    const r = await raw(node.baseUrl, "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n")
    expect(r).toMatch(/^HTTP\/1\.1 405 /)
    expect(JSON.parse(bodyOf(r))).toEqual({ code: -1020, msg: "This operation is not supported." })
  })

  it("answers a 10 MB signed body with 413 -1104 that the client can read, then closes", async () => {
    const trader = await createKey(db.url, { scopes: ["read", "trade"] })
    const size = 10 * 1024 * 1024
    const head = `POST ${v1}/order?${signedQuery(trader, { symbol: "X" })} HTTP/1.1\r\nhost: x\r\nx-mbx-apikey: ${trader.apiKey}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${size}\r\n\r\n`
    const chunk = Buffer.alloc(64 * 1024, "a")
    const r = await raw(node.baseUrl, head, (socket) => {
      let sent = 0
      const pump = () => {
        while (sent < size) {
          sent += chunk.length
          if (!socket.write(chunk)) return socket.once("drain", pump)
        }
      }
      pump()
      socket.on("error", () => {})
    })
    expect(r).toMatch(/^HTTP\/1\.1 413 /)
    expect(JSON.parse(bodyOf(r))).toEqual({ code: -1104, msg: "Request body is too large." })
  })
})

describe("the fast lane and the Effect path answer alike", () => {
  // The used weight is a count both nodes share through Postgres (same database, same client IP),
  // so its value depends on when they last synced: compared as present, not equal.
  const strip = (headers: Reply["headers"]) => {
    const { date: _d, connection: _c, "keep-alive": _k, "x-mbx-used-weight-1m": mbx, "x-svc-used-weight-1m": svc, ...rest } = headers
    expect(Number(mbx)).toBeGreaterThan(0)
    expect(svc).toBe(mbx)
    return rest
  }
  for (const path of [`${v1}/ping`, `${v1}`, "/api/v3/ping", `${v1}/time`, `${v1}/exchangeInfo`]) {
    it(`GET ${path}: same status, headers and body shape`, async () => {
      const a = await call(fast.baseUrl, "127.0.0.9", "GET", path)
      const b = await call(slow.baseUrl, "127.0.0.9", "GET", path)
      expect(a.status).toBe(200)
      expect(b.status).toBe(a.status)
      expect(strip(a.headers)).toEqual(strip(b.headers))
      const normalise = (body: string) => body.replace(/"serverTime":\d+/, '"serverTime":0')
      expect(normalise(a.body)).toBe(normalise(b.body))
    })
  }
})
