// Issue 27 ("hostile clients, round 2"): what a probe of the three listeners got through, each
// case against a real node. The seeded barrages are in hostile-input*.test.ts; these are the
// targeted cases, one describe per hole.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { signedGet } from "../../harness/signed.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { sendRaw } from "../support/http.ts"
import { createDeskKey, createSession } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
let deskKey: string
let session: string
const webhookSecret = "partner-a-secret-for-hostile-tests"

beforeAll(async () => {
  db = await createTestDatabase("hostilecl")
  node = await startNode(db.url, { SHARDLINE_TRUST_PROXY: "true", SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100", SHARDLINE_WEBHOOK_SECRET_PARTNER_A: webhookSecret })
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
    let client = 0 // each call from its own address: the exchange's per-IP budget here is 100
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
