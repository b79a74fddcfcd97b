// Desk order creation with an Idempotency-Key (docs/desk-orders.md, "Retrying an order"), through
// a real node: the DeskOrder entity writes the order and the key's claim in one transaction, so a
// retry with the same key and body answers the same order, another body under the key is 422 in
// the desk's error shape, parallel retries make one order, keys are scoped per API key, and a
// request without a key still makes a new order each time.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { deskCaller, deskOrderCount } from "../support/deskHttp.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { createDeskKey } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
const call = deskCaller(() => node.deskUrl)
const payout = "0x52908400098527886E0F7030069857D2E4169EE7"
const withKey = (key: string) => ({ "idempotency-key": key })

beforeAll(async () => {
  db = await createTestDatabase("deskidem")
  node = await startNode(db.url)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("desk order Idempotency-Key", () => {
  it("answers a retried cash-out with the same order, and refuses the key with another body (422)", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    const body = { amount: 12, chain: "base", payoutAddress: payout }
    const first = await call("POST", "/cashout/orders", key.apiKey, body, withKey("cashout-1"))
    expect(first.status).toBe(201)
    const before = await deskOrderCount(db)
    const again = await call("POST", "/cashout/orders", key.apiKey, body, withKey("cashout-1"))
    expect(again.status).toBe(201)
    expect(again.body).toMatchObject({ id: first.body.id, shortRef: first.body.shortRef, depositAddress: first.body.depositAddress })
    // The structured-field form of the same key is the same key.
    expect((await call("POST", "/cashout/orders", key.apiKey, body, withKey("\"cashout-1\""))).body.id).toBe(first.body.id)
    const other = await call("POST", "/cashout/orders", key.apiKey, { ...body, amount: 13 }, withKey("cashout-1"))
    expect(other).toMatchObject({ status: 422, body: { error: { code: "idempotency_key_reused", message: expect.stringMatching(/different request payload/) } } })
    expect(await deskOrderCount(db)).toBe(before)
    // Without a key, every request is a new order.
    const a = await call("POST", "/cashout/orders", key.apiKey, body)
    const b = await call("POST", "/cashout/orders", key.apiKey, body)
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(a.body.id).not.toBe(b.body.id)
  }, 60_000)

  it("makes one order of parallel retries (a wrap)", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const body = { direction: "wrap", asset: "BTC", amount: "0.5", payoutAddress: randomLedgerKey().address }
    const before = await deskOrderCount(db)
    const answers = await Promise.all(Array.from({ length: 8 }, () => call("POST", "/wrap/orders", key.apiKey, body, withKey("wrap-parallel"))))
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(201))
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1)
    expect(await deskOrderCount(db)).toBe(before + 1)
    const claims = await db.query<{ order_id: string }>(`SELECT i.order_id::text FROM desk_order_idempotency i JOIN desk_orders o ON o.id = i.order_id WHERE o.member_id = $1`, [key.memberId])
    expect(claims).toEqual([{ order_id: answers[0]!.body.id }])
  }, 60_000)

  it("scopes keys per API key, covers stables orders, and refuses a malformed key in the desk's shape", async () => {
    const one = await createDeskKey(db.url, { scopes: ["stables"] })
    const two = await createDeskKey(db.url, { scopes: ["stables"] })
    const body = { asset: "XUSD", direction: "mint", chain: "base", token: "USDC", recipient: randomLedgerKey().address, amount: 30 }
    const a = await call("POST", "/stables/orders", one.apiKey, body, withKey("shared"))
    const b = await call("POST", "/stables/orders", two.apiKey, body, withKey("shared"))
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(a.body.id).not.toBe(b.body.id)
    expect((await call("POST", "/stables/orders", one.apiKey, body, withKey("shared"))).body.id).toBe(a.body.id)
    const bad = await call("POST", "/stables/orders", one.apiKey, body, withKey("\"unterminated"))
    expect(bad).toMatchObject({ status: 400, body: { error: { code: "invalid_parameter", message: expect.stringMatching(/^Idempotency-Key/) } } })
  }, 60_000)

  it("frees a key after its 24-hour lifetime", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    const body = { amount: 20, chain: "ethereum", payoutAddress: payout }
    const first = await call("POST", "/cashout/orders", key.apiKey, body, withKey("aged"))
    await db.query("UPDATE desk_order_idempotency SET created_at = now() - interval '25 hours' WHERE order_id = $1", [first.body.id])
    const later = await call("POST", "/cashout/orders", key.apiKey, body, withKey("aged"))
    expect(later.status).toBe(201)
    expect(later.body.id).not.toBe(first.body.id)
  }, 60_000)
})
