// Inbound partner webhooks on a real node: the partner's secret by Bearer or x-api-key (constant
// time), 503 for a partner without a secret, 401 for a wrong one, the event recorded once against
// the order it names (short reference or uuid), operations paged (/ops, /metrics), and bad bodies
// refused in the desk's shape with nothing recorded.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { createDeskKey } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
const secretA = "partner-a-secret-0123456789abcdef"
const hook = (partner: string) => `${node.deskUrl}/api/public/v1/webhooks/${partner}`
let order: { id: string; short_ref: string }

const post = async (partner: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${secretA}` }) => {
  const r = await fetch(hook(partner), { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) })
  return { status: r.status, body: (await r.json()) as any, headers: r.headers }
}
const events = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM desk_order_events`))[0]!.n

beforeAll(async () => {
  db = await createTestDatabase("deskhooks")
  node = await startNode(db.url, { SHARDLINE_WEBHOOK_SECRET_PARTNER_A: secretA })
  const key = await createDeskKey(db.url, { scopes: ["cashout"] })
  const [row] = await db.query<{ id: string; short_ref: string }>(`INSERT INTO desk_orders (short_ref, member_id, key_id, kind, status, asset, chain, amount, fee, payout,
      deposit_address, required_confirmations, expires_at)
    SELECT 'TX-AB12CD34', member_id, id, 'cashout', 'awaiting_deposit', 'DUSD', 'base', 100000000, 300000, 99700, 'Tdeposit', 1, now() + interval '1 hour'
    FROM desk_api_keys WHERE key_hash = encode(sha256($1::bytea), 'hex') RETURNING id::text, short_ref`, [key.apiKey])
  order = row!
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("inbound partner webhooks", () => {
  it("answers 503 for a partner whose secret is unset, and 401 for a missing or wrong secret", async () => {
    expect(await post("partner-b", { event: "x" })).toMatchObject({ status: 503, body: { error: { code: "unavailable" } } })
    const missing = await post("partner-a", { event: "x" }, {})
    expect(missing).toMatchObject({ status: 401, body: { error: { code: "invalid_webhook_secret" } } })
    expect(missing.headers.get("www-authenticate")).toBe("Bearer")
    expect((await post("partner-a", { event: "x" }, { authorization: `Bearer ${secretA}x` })).status).toBe(401)
    expect((await post("partner-a", { event: "x" }, { "x-api-key": secretA.slice(0, -1) })).status).toBe(401)
    expect(await events()).toBe(0)
  })

  it("records an event once against the order its short reference or uuid names", async () => {
    const body = { event: "payout_confirmed", order_id: order.short_ref.toLowerCase(), message: "paid", amount: 12.5, chain: "base", txid: "0xabc", data: { n: [1, 2] } }
    expect(await post("partner-a", body)).toMatchObject({ status: 200, body: { ok: true, recorded: true, order: order.short_ref } })
    // The same event again (keys in another order, by x-api-key): not recorded twice.
    const reordered = { data: { n: [1, 2] }, txid: "0xabc", chain: "base", amount: 12.5, message: "paid", order_id: order.short_ref.toLowerCase(), event: "payout_confirmed" }
    expect(await post("partner-a", reordered, { "x-api-key": secretA })).toMatchObject({ status: 200, body: { ok: true, recorded: false, order: order.short_ref } })
    expect(await post("partner-a", { event: "note", order_id: order.id.toUpperCase() })).toMatchObject({ body: { recorded: true, order: order.short_ref } })
    // An order that is not ours: recorded (it is still evidence), without an order.
    const stranger = await post("partner-a", { event: "note", order_id: "TX-ZZZZZZZZ" })
    expect(stranger.body).toEqual({ ok: true, recorded: true })
    const rows = await db.query<{ order_id: string | null; source: string; event: string; body: any }>(`SELECT order_id::text, source, event, body FROM desk_order_events ORDER BY id`)
    expect(rows.map((r) => [r.order_id, r.source, r.event])).toEqual([[order.id, "partner-a", "payout_confirmed"], [order.id, "partner-a", "note"], [null, "partner-a", "note"]])
    expect(rows[0]!.body).toEqual(body)
    // Operations are paged: /ops lists the events (their order references only with an ops token:
    // ops-redaction.test.ts), /metrics counts them.
    const ops = (await (await fetch(`${node.baseUrl}/ops`)).json()) as any
    expect(ops.partnerWebhooks.lastDay).toBe(3)
    expect(ops.partnerWebhooks.latest[2]).toMatchObject({ partner: "partner-a", event: "payout_confirmed" })
    const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text()
    expect(metrics).toMatch(/shardline_desk_webhook_events_total\{[^}]*partner="partner-a"[^}]*\} 3/)
    // Nothing moved: the order is as it was.
    expect((await db.query<{ status: string }>(`SELECT status FROM desk_orders WHERE id = $1`, [order.id]))[0]!.status).toBe("awaiting_deposit")
  })

  it("refuses bad bodies in the desk's shape and records nothing", async () => {
    const before = await events()
    for (const bad of ["{not json", { message: "no event" }, { event: "" }, { event: "x", order_id: "ORDER-1" }, { event: "x", amount: "12" }, { event: "x".repeat(101) }, [1, 2]]) {
      const r = await post("partner-a", bad)
      expect(r.status, JSON.stringify(bad)).toBe(400)
      expect(r.body.error.code).toMatch(/^invalid_(request|parameter)$/)
    }
    // A multipart body, empty or cut short, is refused at once (the platform's parser would wait forever).
    for (const body of ["", "--x\r\nContent-Disposition: form-data; name=\"event\"\r\n\r\nabc"]) {
      const r = await fetch(hook("partner-a"), {
        method: "POST",
        headers: { authorization: `Bearer ${secretA}`, "content-type": "multipart/form-data; boundary=x" },
        body,
        signal: AbortSignal.timeout(5_000)
      })
      expect(r.status).toBe(400)
      expect(((await r.json()) as any).error.code).toBe("invalid_request")
    }
    expect(await events()).toBe(before)
  })
})
