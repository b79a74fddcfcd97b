// Issue 27 ("hostile clients, round 2"): what a probe of the three listeners got through, each
// case against a real node. The seeded barrages are in hostile-input*.test.ts; these are the
// targeted cases, one describe per hole.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { signedGet } from "../../harness/signed.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { request } from "node:http"
import { connect, type Socket } from "node:net"
import { rawBody, sendRaw } from "../support/http.ts"
import { createDeskKey, createSession } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
let deskKey: string
let session: string
const webhookSecret = "partner-a-secret-for-hostile-tests"
const uploadBytesMax = 300_000
const connectionsPerIp = 24

/** The exchange's per-IP weight budget in this file; the proxy test spends it all. The loopback
 * client's own exchange calls across the file (readiness, /metrics at 5 each, raw sockets) stay
 * well under it: its desk and social calls are charged to those listeners' own budgets (issue 23.3;
 * with one bucket for all three they passed 100 and this budget had been raised to 1000). */
const ipWeightPerMin = 100

beforeAll(async () => {
  db = await createTestDatabase("hostilecl")
  node = await startNode(db.url, { SHARDLINE_TRUST_PROXY: "true", SHARDLINE_RATE_LIMIT_IP_WEIGHT: String(ipWeightPerMin), SHARDLINE_WEBHOOK_SECRET_PARTNER_A: webhookSecret,
    SHARDLINE_SOCIAL_CONTENT_BYTES_MAX: String(uploadBytesMax), SHARDLINE_HTTP_HEADERS_TIMEOUT_MS: "1500", SHARDLINE_HTTP_BODY_TIMEOUT_MS: "1500",
    SHARDLINE_HTTP_CONNECTIONS_PER_IP: String(connectionsPerIp),
    // 127.0.0.1 is the proxy; 127.0.0.2 (also loopback) is a client of its own, with a connection cap.
    SHARDLINE_TRUSTED_PROXIES: "127.0.0.1,::1" })
  deskKey = (await createDeskKey(db.url, { scopes: ["cashout", "wrap", "stables"] })).apiKey
  session = (await createSession(db.url, "TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K")).token
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
    for (let i = 0; i < ipWeightPerMin + 10; i++) {
      const r = await fetch(`${node.baseUrl}${v1}/time`, { headers: { "x-forwarded-for": `10.${i >> 8}.${i & 255}.1, 198.51.100.77` } })
      statuses.push(r.status)
      await r.arrayBuffer()
    }
    expect(statuses.slice(0, ipWeightPerMin).every((s) => s === 200)).toBe(true)
    expect(statuses.slice(ipWeightPerMin).every((s) => s === 429)).toBe(true)
    // The budget spent was 198.51.100.77's, not that of the addresses the client named.
    const other = await fetch(`${node.baseUrl}${v1}/time`, { headers: { "x-forwarded-for": "10.0.0.1" } })
    expect(other.status).toBe(200)
  })
})

/** A desk or social error body: its code, after checking the shape. */
const errorCode = (body: string): string => {
  const parsed = JSON.parse(body) as { error: { code: string; message: string } }
  expect(Object.keys(parsed)).toEqual(["error"])
  expect(typeof parsed.error.message).toBe("string")
  return parsed.error.code
}
const count = async (table: string) => Number((await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`))[0]!.n)
const json = (text: string) => Buffer.from(text)
const deep = (levels: number) => `{"event":${"[".repeat(levels)}${"]".repeat(levels)}}`

describe("input no route can take is a 400 in the service's shape, never a retryable 503", () => {
  it("JSON nested 3,000 to 10,000 deep on desk and social routes", async () => {
    for (const levels of [3_000, 10_000]) {
      const desk = await sendRaw(node.deskUrl, "POST", `${v1}/cashout/orders`, { "content-type": "application/json", "x-api-key": deskKey }, json(`{"amount":${"[".repeat(levels)}${"]".repeat(levels)},"chain":"base"}`))
      expect(desk.status).toBe(400)
      expect(errorCode(desk.body)).toBe("invalid_request")
      const social = await sendRaw(node.socialUrl, "POST", "/api/public/ledger-verify-message", { "content-type": "application/json" }, json(deep(levels)))
      expect(social.status).toBe(400)
      expect(JSON.parse(social.body).error.message).toMatch(/nested deeper than 64/)
      const webhook = await sendRaw(node.deskUrl, "POST", `${v1}/webhooks/partner-a`, { "content-type": "application/json", "x-api-key": webhookSecret }, json(deep(levels)))
      expect(webhook.status).toBe(400)
    }
  })

  it("a NUL or an unpaired surrogate in webhook fields, a wrap reference, a cash-out source, a post body: 400, nothing stored", async () => {
    const events = await count("desk_order_events")
    const orders = await count("desk_orders")
    const cases: Array<[string, string, Record<string, string>, string]> = [
      [node.deskUrl, `${v1}/webhooks/partner-a`, { "x-api-key": webhookSecret }, '{"event":"paid\\u0000"}'],
      [node.deskUrl, `${v1}/webhooks/partner-a`, { "x-api-key": webhookSecret }, '{"event":"paid","message":"\\ud800"}'],
      [node.deskUrl, `${v1}/wrap/orders`, { "x-api-key": deskKey }, '{"direction":"wrap","asset":"BTC","amount":"0.1","payoutAddress":"TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K","reference":"a\\u0000b"}'],
      [node.deskUrl, `${v1}/cashout/orders`, { "x-api-key": deskKey }, '{"amount":"10","chain":"base","source":"\\udc00x"}'],
      [node.socialUrl, "/api/social/posts", { authorization: `Bearer ${session}` }, '{"body":"hi \\u0000"}'],
      [node.socialUrl, "/api/social/posts", { authorization: `Bearer ${session}` }, '{"body":"hi \\ud83d"}']
    ]
    for (const [base, path, headers, body] of cases) {
      const r = await sendRaw(base, "POST", path, { "content-type": "application/json", ...headers }, json(body))
      expect(r.status, `${path} ${body}`).toBe(400)
      expect(errorCode(r.body)).toBe("invalid_request")
    }
    // A paired surrogate (an emoji) is text like any other.
    const emoji = await sendRaw(node.deskUrl, "POST", `${v1}/webhooks/partner-a`, { "content-type": "application/json", "x-api-key": webhookSecret }, json('{"event":"paid \\ud83d\\ude00"}'))
    expect(emoji.status).toBe(200)
    expect(await count("desk_order_events")).toBe(events + 1)
    expect(await count("desk_orders")).toBe(orders)
  })

  it("%00 in a path: timeline/%00 and embed/live/%00", async () => {
    for (const path of ["/api/public/timeline/%00", "/embed/live/%00", "/api/public/post/%00"]) {
      const r = await sendRaw(node.socialUrl, "GET", path, {}, Buffer.alloc(0))
      expect(r.status, path).toBe(400)
      expect(errorCode(r.body)).toBe("invalid_request")
    }
  })

  it("startTime and endTime at 2^63-1 and beyond on allOrders and myTrades: -1100, not -1001", async () => {
    const k = await createKey(db.url, { scopes: ["read"] })
    let client = 0 // each call from its own address: the exchange's per-IP budget here is ipWeightPerMin
    for (const path of ["allOrders", "myTrades"]) {
      for (const name of ["startTime", "endTime"]) {
        for (const value of ["9223372036854775807", "99999999999999999999"]) {
          const r = await signedGet(node.baseUrl, `${v1}/${path}`, k, { [name]: value }, { "x-forwarded-for": `192.0.2.${++client}` })
          expect(r.status, `${path} ${name}=${value}`).toBe(400)
          expect(((await r.json()) as { code: number }).code).toBe(-1100)
        }
      }
    }
  })
})

interface ChunkedReply {
  readonly status: number
  readonly body: string
  /** Body bytes the client had written when the answer came. */
  readonly sent: number
}

/** A chunked body (no Content-Length) written 16 KiB at a time until the server answers, as a client
 * streaming a huge body would; stops writing at `bytesMax`. */
const chunkedUntilAnswer = (baseUrl: string, path: string, headers: Record<string, string>, bytesMax = 200_000_000) =>
  new Promise<ChunkedReply>((resolve, reject) => {
    const url = new URL(baseUrl)
    let sent = 0
    let answered = false
    const req = request({ host: url.hostname, port: url.port, method: "POST", path, agent: false, headers: { "content-type": "application/json", ...headers } }, (res) => {
      answered = true
      const at = sent
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), sent: at }))
      res.on("error", reject)
      req.end()
    })
    req.on("error", (e) => (answered ? undefined : reject(e)))
    const chunk = Buffer.alloc(16 * 1024, 0x20)
    const pump = () => {
      while (!answered && sent < bytesMax) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once("drain", pump)
      }
      if (!answered) req.end()
    }
    req.write("{\"a\":\"")
    pump()
  })

describe("chunked bodies are counted as they arrive", () => {
  it("desk (32 KiB), social (64 KiB), exchange (16 KB): 413 in the service's shape soon after the limit, then the connection closes", async () => {
    const cases: Array<[string, string, number, (body: string) => void]> = [
      [node.deskUrl, `${v1}/cashout/orders`, 32 * 1024, (b) => expect(JSON.parse(b)).toEqual({ error: { code: "body_too_large", message: "Request body is too large." } })],
      [node.socialUrl, "/api/public/ledger-verify-message", 64 * 1024, (b) => expect(JSON.parse(b).error.code).toBe("body_too_large")],
      [node.baseUrl, `${v1}/order`, 16 * 1024, (b) => expect(JSON.parse(b)).toEqual({ code: -1104, msg: "Request body is too large." })]
    ]
    for (const [base, path, limit, shape] of cases) {
      const r = await chunkedUntilAnswer(base, path, { "x-api-key": deskKey })
      expect(r.status, path).toBe(413)
      shape(r.body)
      expect(r.sent, path).toBeLessThan(limit + 4 * 1024 * 1024) // answered while the body was still coming, not after 200 MB
    }
  })

  it("a social upload past SHARDLINE_SOCIAL_CONTENT_BYTES_MAX: 413 in the social shape, nothing stored", async () => {
    const before = await count("social_blobs")
    const r = await chunkedUntilAnswer(node.socialUrl, "/api/social/upload", { authorization: `Bearer ${session}`, "content-type": "image/png" })
    expect(r.status).toBe(413)
    expect(JSON.parse(r.body).error.code).toBe("body_too_large")
    expect(r.sent).toBeLessThan(uploadBytesMax + 4 * 1024 * 1024)
    // The listener answers 413 as the limit passes and then interrupts the handler, whose release
    // drops the staging row: it goes soon after the answer, not before it. Nothing may stay.
    const deadline = Date.now() + 10_000
    while (await count("social_blobs") !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    expect(await count("social_blobs")).toBe(before)
  })

  it("a webhook's secret is checked before its body is read", async () => {
    const wrong = await chunkedUntilAnswer(node.deskUrl, `${v1}/webhooks/partner-a`, { "x-api-key": "not-the-secret" })
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.body).error.code).toBe("invalid_webhook_secret")
    expect(wrong.sent).toBeLessThan(4 * 1024 * 1024)
    const unset = await chunkedUntilAnswer(node.deskUrl, `${v1}/webhooks/partner-b`, { "x-api-key": webhookSecret })
    expect(unset.status).toBe(503)
    expect(JSON.parse(unset.body).error.code).toBe("unavailable")
    // The right secret still reaches the handler.
    const ok = await sendRaw(node.deskUrl, "POST", `${v1}/webhooks/partner-a`, { "content-type": "application/json", authorization: `Bearer ${webhookSecret}` }, json('{"event":"chunk-test"}'))
    expect(ok.status).toBe(200)
  })
})

/** Opens a connection and writes `head`, then `trickle` one byte every `everyMs`; resolves with
 * what the server sent and how long until it closed. */
const trickle = (baseUrl: string, head: string, drip: string, everyMs: number, localAddress?: string) =>
  new Promise<{ answer: string; ms: number }>((resolve, reject) => {
    const url = new URL(baseUrl)
    const started = Date.now()
    let answer = ""
    let i = 0
    const socket = connect({ port: Number(url.port), host: url.hostname, ...(localAddress === undefined ? {} : { localAddress }) }, () => socket.write(head))
    const timer = setInterval(() => {
      if (i < drip.length && socket.writable) socket.write(drip[i++]!)
    }, everyMs)
    socket.on("data", (c: Buffer) => (answer += c.toString("latin1")))
    socket.on("close", () => {
      clearInterval(timer)
      resolve({ answer, ms: Date.now() - started })
    })
    socket.on("error", (e) => (answer === "" ? reject(e) : undefined))
  })

describe("slow clients (headers 1.5 s, body 1.5 s, 24 connections per IP in this file)", () => {
  it("headers trickled: 408 in each service's shape once the header time is up", async () => {
    const shapes: Array<[string, (body: string) => void]> = [
      [node.baseUrl, (b) => expect(JSON.parse(b)).toEqual({ code: -1007, msg: "Timeout waiting for the request." })],
      [node.deskUrl, (b) => expect(JSON.parse(b).error.code).toBe("request_timeout")],
      [node.socialUrl, (b) => expect(JSON.parse(b).error.code).toBe("request_timeout")]
    ]
    const results = await Promise.all(shapes.map(([base]) => trickle(base, "GET /api/public/v1/ping HTTP/1.1\r\nhost: x\r\n", "x-slow: " + "a".repeat(200), 100)))
    results.forEach(({ answer, ms }, i) => {
      expect(answer).toMatch(/^HTTP\/1\.1 408 /)
      shapes[i]![1](rawBody(answer))
      expect(ms).toBeLessThan(6_000)
    })
  })

  it("a body trickled at a byte per 200 ms: 408 once the body time is up", async () => {
    const head = `POST ${v1}/cashout/orders HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 500\r\nx-api-key: ${deskKey}\r\n\r\n`
    const { answer, ms } = await trickle(node.deskUrl, head, "{".repeat(500), 200)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(JSON.parse(rawBody(answer)).error.code).toBe("request_timeout")
    expect(ms).toBeLessThan(7_000)
  })

  it("open connections per IP are capped on every listener: the next one is 429 in the service's shape", async () => {
    for (const [base, check] of [
      [node.deskUrl, (b: string) => expect(JSON.parse(b).error.code).toBe("too_many_connections")],
      [node.baseUrl, (b: string) => expect(JSON.parse(b).code).toBe(-1003)]
    ] as const) {
      const url = new URL(base)
      const held: Array<Socket> = []
      try {
        for (let i = 0; i < connectionsPerIp; i++) {
          held.push(await new Promise<Socket>((resolve) => {
            const s = connect({ port: Number(url.port), host: url.hostname, localAddress: "127.0.0.2" }, () => resolve(s))
            s.on("error", () => undefined)
          }))
        }
        const over = await trickle(base, `GET ${v1}/ping HTTP/1.1\r\nhost: x\r\n\r\n`, "", 1_000, "127.0.0.2")
        // The proxy's own connections are not counted.
        expect((await sendRaw(base, "GET", `${v1}/ping`, {}, Buffer.alloc(0))).status).not.toBe(429)
        expect(over.answer).toMatch(/^HTTP\/1\.1 429 /)
        check(rawBody(over.answer))
      } finally {
        held.forEach((s) => s.destroy())
      }
      // Closed connections are given back.
      await new Promise((r) => setTimeout(r, 200))
      const again = await sendRaw(base, "GET", `${v1}/ping`, {}, Buffer.alloc(0))
      expect(again.status).not.toBe(429)
    }
  })
})

/** shardline_http_requests_total for one service, route and status, as /metrics shows it now. */
const requestsCounted = async (service: string, route: string, status: number) => {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text()
  const line = text.split("\n").find((l) =>
    l.startsWith("shardline_http_requests_total{") && l.includes(`service="${service}"`) && l.includes(`route="${route}"`) && l.includes(`status="${status}"`))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
}

/** One request with exactly these headers on a fresh connection; the raw answer. */
const rawRequest = (baseUrl: string, head: string) =>
  trickle(baseUrl, head, "", 1_000).then((r) => r.answer)

describe("protocol upgrades and expectations are answered in the service's shape, through the edge", () => {
  const listeners = () => [
    { base: node.baseUrl, service: "exchange", path: `${v1}/time`, route: `${v1}/time`, used: "x-mbx-used-weight-1m" },
    { base: node.deskUrl, service: "desk", path: "/api/public/status", route: "/api/public/status", used: "ratelimit-remaining" },
    { base: node.socialUrl, service: "social", path: "/api/public/ledger-health", route: "/api/public/ledger-health", used: "ratelimit-remaining" }
  ]

  it("Upgrade: websocket → 400 with a body, charged (usage headers) and counted in /metrics, on all three listeners", async () => {
    for (const l of listeners()) {
      const before = await requestsCounted(l.service, l.route, 400)
      const answer = await rawRequest(l.base, `GET ${l.path} HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`)
      expect(answer, l.service).toMatch(/^HTTP\/1\.1 400 /)
      expect(answer.toLowerCase()).toContain(l.used)
      const body = JSON.parse(rawBody(answer))
      if (l.service === "exchange") expect(body).toEqual({ code: -1020, msg: "Protocol upgrades (WebSocket) are not supported; send plain HTTP requests." })
      else expect(body.error.code).toBe("upgrade_not_supported")
      expect(await requestsCounted(l.service, l.route, 400)).toBe(before + 1)
    }
  })

  it("Expect: 200-ok (any expectation but 100-continue) → 417 with a body in the service's shape", async () => {
    for (const l of listeners()) {
      const before = await requestsCounted(l.service, l.route, 417)
      const answer = await rawRequest(l.base, `GET ${l.path} HTTP/1.1\r\nhost: x\r\nexpect: 200-ok\r\n\r\n`)
      expect(answer, l.service).toMatch(/^HTTP\/1\.1 417 /)
      const body = JSON.parse(rawBody(answer))
      if (l.service === "exchange") expect(body.code).toBe(-1020)
      else expect(body.error.code).toBe("expectation_failed")
      expect(await requestsCounted(l.service, l.route, 417)).toBe(before + 1)
    }
    // 100-continue still works.
    const r = await sendRaw(node.deskUrl, "POST", `${v1}/webhooks/partner-a`, { "content-type": "application/json", expect: "100-continue", "x-api-key": webhookSecret }, json('{"event":"continue"}'))
    expect(r.status).toBe(200)
  })
})

describe("found by the fuzz run (harness/fuzz, test/integration/fuzz-listeners.test.ts)", () => {
  it("an upload refused by its first bytes (SVG, chunked, 63 KB, connection: close) is answered 415 before the connection goes (seed 7, #1219)", async () => {
    const url = new URL(node.socialUrl)
    const body = Buffer.alloc(63_036, 0xcd)
    const answer = await new Promise<string>((resolve, reject) => {
      let text = ""
      const socket = connect({ port: Number(url.port), host: url.hostname }, () => {
        socket.write(`POST /api/social/upload HTTP/1.1\r\nhost: x\r\nconnection: close\r\nauthorization: Bearer ${session}\r\n` +
          `content-type: image/svg+xml\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n`)
        socket.write(body)
        socket.write("\r\n0\r\n\r\n")
      })
      socket.on("data", (c: Buffer) => (text += c.toString("latin1")))
      socket.on("close", () => resolve(text))
      socket.on("error", (e) => (text === "" ? reject(e) : resolve(text)))
    })
    expect(answer).toMatch(/^HTTP\/1\.1 415 /)
    expect(JSON.parse(rawBody(answer)).error.code).toBe("unsupported_media_type")
  })

  it("a multipart body on the exchange listener is 400 -1102 at the edge, not 503 -1001 from the multipart parser", async () => {
    // Its own client address (loopback is a trusted proxy here): the file's other cases spend
    // 127.0.0.1's 100-weight minute, and a 429 would hide the answer this case is about.
    for (const body of ["{\"amount\":1e999999}", "--x\r\ncontent-disposition: form-data; name=\"a\"\r\n\r\n1\r\n--x--\r\n", ""]) {
      const r = await sendRaw(node.baseUrl, "POST", "/api/public/auth/wallet-callback", { "content-type": "multipart/form-data; boundary=x", "x-forwarded-for": "203.0.113.41" }, json(body))
      expect(r.status, `${body} → ${r.body}`).toBe(400)
      expect(JSON.parse(r.body)).toEqual({ code: -1102, msg: expect.stringMatching(/^Multipart bodies are not accepted/) })
    }
  })
})

describe("the zero address as a payout (27.7) through the desk's HTTP routes", () => {
  it("a cash-out, a saved payout address and an unwrap to a burn address are 400 naming it, nothing stored", async () => {
    const orders = await count("desk_orders")
    const zero = "0x0000000000000000000000000000000000000000"
    const cases: Array<[string, string]> = [
      [`${v1}/cashout/orders`, JSON.stringify({ amount: "10", chain: "base", payoutAddress: zero })],
      [`${v1}/cashout/payout-address`, JSON.stringify({ payoutAddress: zero })],
      [`${v1}/wrap/orders`, JSON.stringify({ direction: "unwrap", asset: "ETH", amount: "0.1", payoutAddress: "0x000000000000000000000000000000000000dEaD" })]
    ]
    for (const [path, body] of cases) {
      const r = await sendRaw(node.deskUrl, "POST", path, { "content-type": "application/json", "x-api-key": deskKey }, json(body))
      expect(r.status, path).toBe(400)
      expect(JSON.parse(r.body).error.message, path).toMatch(/burn address/)
    }
    expect(await count("desk_orders")).toBe(orders)
  })
})
