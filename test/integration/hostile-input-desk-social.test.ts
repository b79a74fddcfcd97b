// test/integration/hostile-input.test.ts's idea on the desk and social listeners: seeded random
// hostile requests (junk methods, paths, queries, bodies, content types and credentials, a third
// with a real key or session). Whatever comes in, the answer is never a 5xx other than 503, never a
// stack trace, and every error body is `{"error": {"code": <snake_case>, "message": <string>}}`.
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { rawBody, rawSocket, type RawReply, sendRaw } from "../support/http.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { createDeskKey, createSession } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
let deskKey: string
let session: string

beforeAll(async () => {
  db = await createTestDatabase("hostileds")
  node = await startNode(db.url, { SHARDLINE_DESK_RATE_LIMIT_IP_WEIGHT: "10000000", SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "10000000" })
  deskKey = (await createDeskKey(db.url, { scopes: ["cashout"] })).apiKey
  session = (await createSession(db.url, "TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K")).token
})
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const routes = {
  desk: ["/api/public/status", "/api/public/reserves", "/api/public/reserves/history", "/api/public/v1/stables/assets", "/api/public/v1/rewards/balance", "/api/public/v1/key", "/api/public/v1/key/", "/api/public/v1/cashout/orders", "/api/public/v1/wallet-link", "/openapi.json", "/api-docs", "/api/public/v1/ping", "/%2e%2e/api/public/status",
    // Issue 27: bodies that nest, NUL and unpaired surrogates (see bodies below) on routes that store them.
    "/api/public/v1/webhooks/partner-a", "/api/public/v1/wrap/orders", "/api/public/v1/stables/orders", "/api/public/v1/cashout/payout-address", "/favicon.ico"],
  social: [
    "/api/public/ledger-health", "/api/public/v1/session", "/api/public/post/abc", "/api/public/post/abc/comments?limit=-1", "/api/public/ledger-verify-message", "/openapi.json", "/api-docs", "/api/public/v1/ping", "/p/x",
    "/api/stream/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku", "/api/stream/x", "/api/public/oembed", "/embed/p/abcdef", "/embed/x", "/embed/live/x",
    "/embed/live/by-wallet/x", "/api/social/upload", "/api/social/posts", "/api/social/posts/abcdef/takedown", "/api/public/timeline/x", "/api/social/continuity",
    "/api/social/posts/abcdef/unsigned", "/api/social/posts/abcdef/signatures", "/api/public/timeline/%00", "/embed/live/%00", "/api/public/post/%00",
    "/api/social/posts/00000000-0000-0000-0000-000000000000/comments/abc/signatures", "/api/social/posts/abc/comments/abc/unsigned", "/api/social/posts/abcdef/comments",
    // Issue 24 / 27.10: the web app, its account view and the session routes.
    "/api/social/me", "/api/social/wallet-link", "/api/social/wallet-link/abc", "/api/social/wallet-link/%00", "/api/public/auth/sign-out", "/api/public/v1/sessions", "/api/public/v1/sessions/abc", "/api/public/auth/wallet-exchange", "/app/", "/app/sign-in", "/favicon.ico",
    // Issue 23.16: a live channel's playlist route (offline or unknown: 404 in the error shape).
    "/live/x/index.m3u8", "/live/%00/index.m3u8", "/live/bad%20id!/index.m3u8"
  ]
} as const

const junkValue = fc.oneof(
  fc.constantFrom("", "%", "%zz", "%ff%fe", "%00", "%E2%82", "+", "&", "=", "[]", "{}", "null", "9".repeat(5000)),
  fc.string({ maxLength: 40 }).map(encodeURIComponent)
)
const query = fc.array(fc.tuple(fc.constantFrom("token", "id", "address", "days", "x"), junkValue).map(([k, v]) => `${k}=${v}`), { maxLength: 6 })
  .map((ps) => ps.join("&"))

/** Bodies shaped like the documented requests with one field made hostile (wallet-link: no token, bad times). */
const envelope = (payload: Record<string, unknown>) => Buffer.from(JSON.stringify({
  payload: {
    v: 1, type: "wl-link-xpubs", challenge_id: "c", from: "x", callback_url: "x", chains: ["LEDGER", "EVM"],
    xpubs: { LEDGER: "xpub", EVM: "0x0" }, wallet: "w", exp: 1, issued_at: "2026-01-01T00:00:00.000Z", ...payload
  },
  signature: "AA==", address: "T"
}))
const shapedBodies = [
  envelope({ callback_url: "not a url" }),
  envelope({ callback_url: "http://x/api/public/v1/wallet-link?token=%zz" }),
  envelope({ callback_url: `http://x/?token=${"A".repeat(43)}`, issued_at: "yesterday" }),
  envelope({ issued_at: "9999-99-99T99:99:99Z" }),
  envelope({ exp: 1e300 })
]
/** Issue 27: JSON 3,000-10,000 deep, NUL and unpaired surrogates in the fields routes store (503s before). */
const hostileJson = [
  `{"event":${"[".repeat(3_000)}${"]".repeat(3_000)}}`,
  `{"body":${"{\"a\":".repeat(10_000)}1${"}".repeat(10_000)}}`,
  '{"event":"paid\\u0000","order_id":"TX-AAAAAAAA"}',
  '{"event":"paid","message":"\\ud800"}',
  '{"direction":"wrap","asset":"BTC","amount":"1","payoutAddress":"x","reference":"\\udc00"}',
  '{"amount":"10","chain":"base","source":"a\\u0000"}',
  '{"body":"hi \\ud83d"}',
  "address=%00&x=1",
  // Issue 27.7: burn addresses as payout and refund addresses (400 with a message, never stored).
  '{"amount":"10","chain":"base","payoutAddress":"0x0000000000000000000000000000000000000000"}',
  '{"direction":"unwrap","asset":"ETH","amount":"0.1","payoutAddress":"0x000000000000000000000000000000000000dEaD"}',
  '{"address":"0x0000000000000000000000000000000000000000"}'
].map((t) => Buffer.from(t))
/** Issue 23.15: uploads typed by their bytes (HLS segments and playlists, unknown bytes, active content). */
const mediaBodies = [
  Buffer.concat(Array.from({ length: 3 }, () => Buffer.concat([Buffer.from([0x47]), Buffer.alloc(187, 0x11)]))),
  Buffer.concat([Buffer.from([0, 0, 0, 16]), Buffer.from("stypmsdh\0\0\0\0", "latin1")]),
  Buffer.from("#EXTM3U\n#EXTINF:-1,\n../../etc/passwd\n"),
  Buffer.from("<svg onload=alert(1)>"),
  Buffer.from("\ufeff  <!DOCTYPE html><script>alert(1)</script>"),
  Buffer.from([0x00, 0x00, 0x00, 0x04, 0x6d, 0x6f, 0x6f])
]

const hostileRequest = (service: keyof typeof routes) =>
  fc.record({
    method: fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"),
    route: fc.oneof(fc.constantFrom(...routes[service]), fc.string({ maxLength: 20 }).map((s) => "/" + encodeURIComponent(s))),
    query,
    body: fc.oneof(
      fc.constant(Buffer.alloc(0)),
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.constantFrom(Buffer.from("{"), Buffer.from("{\"a\":1}"), Buffer.from("[]"), Buffer.from("null"), Buffer.from([0xff, 0xfe, 0x00])),
      fc.constantFrom(...shapedBodies),
      fc.constantFrom(...hostileJson),
      fc.constantFrom(...mediaBodies)
    ),
    contentType: fc.constantFrom(undefined, "application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x",
      "video/mp2t", "application/vnd.apple.mpegurl", "image/svg+xml", "video/iso.segment; x=1", ""),
    credential: fc.constantFrom(undefined, "valid", "", "junk", "A".repeat(64), "A".repeat(5000), "\u00e9"),
    scheme: fc.constantFrom("x-api-key", "bearer", "bearer-lower", "basic"),
    // Issue 27: protocol upgrades and expectations (500 and empty 417 before).
    extra: fc.constantFrom<Record<string, string>>({}, {}, {}, { connection: "Upgrade", upgrade: "websocket" }, { expect: "200-ok" }, { upgrade: "h2c", connection: "Upgrade" })
  })

const credentialHeaders = (credential: string | undefined, scheme: string, valid: string): Record<string, string> => {
  if (credential === undefined) return {}
  const value = credential === "valid" ? valid : credential
  switch (scheme) {
    case "x-api-key":
      return { "x-api-key": value }
    case "bearer":
      return { authorization: `Bearer ${value}` }
    case "bearer-lower":
      return { authorization: `bearer  ${value}` }
    default:
      return { authorization: `Basic ${value}` }
  }
}

const stackTrace = /\n\s+at |\.ts:\d+|node:internal|Error: |FiberFailure/

const expectShape = (reply: RawReply, method: string) => {
  expect(reply.status === 503 || reply.status < 500, `status ${reply.status}`).toBe(true)
  expect([200, 201, 204, 206, 304, 400, 401, 402, 403, 404, 405, 409, 410, 413, 415, 416, 417, 429, 431, 501, 503]).toContain(reply.status)
  if (reply.status < 400 || reply.status === 416) return
  expect(reply.body).not.toMatch(stackTrace)
  if (method === "HEAD") return
  expect(reply.contentType).toContain("application/json")
  const parsed = JSON.parse(reply.body) as { error: { code: unknown; message: unknown } }
  expect(Object.keys(parsed)).toEqual(["error"])
  expect(Object.keys(parsed.error).sort()).toEqual(["code", "message"])
  expect(parsed.error.code).toMatch(/^[a-z]+(_[a-z]+)*$/)
  expect(typeof parsed.error.message).toBe("string")
}

const runs = Number(process.env.HOSTILE_RUNS ?? 300)
const seed = Number(process.env.HOSTILE_SEED ?? 20261123)

describe("hostile input on the desk and social listeners", () => {
  for (const service of ["desk", "social"] as const) {
    it(`${service}: never a 500 or a stack trace; every error is {error: {code, message}}`, async () => {
      const baseUrl = service === "desk" ? node.deskUrl : node.socialUrl
      const valid = service === "desk" ? deskKey : session
      await fc.assert(
        fc.asyncProperty(hostileRequest(service), async (r) => {
          const headers: Record<string, string> = { ...credentialHeaders(r.credential, r.scheme, valid), ...r.extra }
          if (r.contentType !== undefined) headers["content-type"] = r.contentType
          const path = `${r.route}${r.query === "" ? "" : "?" + r.query}`
          expectShape(await sendRaw(baseUrl, r.method, path, headers, r.body), r.method)
        }),
        { numRuns: runs, seed, verbose: 1 }
      )
    }, 120_000)

    it(`${service}: answers bytes node:http refuses in the same shape`, async () => {
      const baseUrl = service === "desk" ? node.deskUrl : node.socialUrl
      const garbage = await rawSocket(baseUrl, "NOT HTTP AT ALL\r\n\r\n")
      expect(garbage).toMatch(/^HTTP\/1\.1 400 /)
      expect(JSON.parse(rawBody(garbage))).toEqual({ error: { code: "invalid_request", message: "Malformed request." } })
      const tooLarge = await rawSocket(baseUrl, `GET /api/public/status?x=${"a".repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`)
      expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /)
      expect(JSON.parse(rawBody(tooLarge)).error.code).toBe("headers_too_large")
      const big = await sendRaw(baseUrl, "POST", "/api/public/status", { "content-type": "application/json" }, Buffer.alloc(200_000, 0x20))
      expect(big.status).toBe(413)
      expect(JSON.parse(big.body)).toEqual({ error: { code: "body_too_large", message: "Request body is too large." } })
    })
  }

  it("both still answer normally after the barrage", async () => {
    expect((await fetch(`${node.deskUrl}/api/public/v1/key`, { headers: { "x-api-key": deskKey } })).status).toBe(200)
    expect((await fetch(`${node.socialUrl}/api/public/v1/session`, { headers: { authorization: `Bearer ${session}` } })).status).toBe(200)
  })
})
