// Desk cash-out through a real node on its devnets: the member's account (permanent addresses,
// saved payout address, fee, coupons that never get used by validation and only lower the fee),
// bad input refused in the desk's shape with nothing created, and a cash-out end to end: the
// token deposited at the order's own address, confirmed, swept and burned on the ledger, USDC
// paid on the chosen EVM chain, each milestone recorded and posted as a signed callback, the
// order readable by its creating key alone (uuid or TX- reference).
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EvmLedgers } from "../../src/chain/evm/EvmLedger.ts"
import { devnetTokenAddress } from "../../src/chain/evm/devnetTokens.ts"
import { validateLedgerAddress } from "../../src/chain/address.ts"
import { verifyCallback } from "../../src/desk/callbacks/callbackSignature.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { cli, cliJson, cliRefused } from "../support/cli.ts"
import { deskCustomer } from "../support/deskCustomer.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { mine, until } from "../support/omniWorld.ts"
import { createDeskKey } from "../support/services.ts"
import { deskCaller, deskOrderCount } from "../support/deskHttp.ts"

let db: TestDatabase
let node: RunningNode
let receiver: Server
let receiverUrl: string
const received: Array<{ headers: IncomingHttpHeaders; body: string }> = []
const payout = "0x52908400098527886E0F7030069857D2E4169EE7"

const call = deskCaller(() => node.deskUrl)
const orderCount = () => deskOrderCount(db)
const env = () => ({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DATA_DIR: node.config.dataDir })

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      received.push({ headers: req.headers, body })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  db = await createTestDatabase("deskcashout")
  node = await startNode(db.url, { SHARDLINE_CALLBACK_ALLOW_HTTP: "true" })
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
  receiver?.closeAllConnections()
  await new Promise((r) => receiver?.close(r))
})

describe("desk cash-out account", () => {
  it("answers the member's permanent addresses, saved payout address and fee; saves a checked payout address", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"], feeBps: 7 })
    const settings = await call("GET", "/cashout/settings", key.apiKey)
    expect(settings.status).toBe(200)
    expect(settings.body).toMatchObject({ live: true, asset: "SUSD", minAmount: "10", maxAmount: "1000000", redeemFeeBps: 10, chains: ["ethereum", "base", "bsc"] })
    const account = settings.body.account
    expect(validateLedgerAddress(account.depositAddress).valid).toBe(true)
    expect(account.evmAddress).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(account).toMatchObject({ payoutAddress: null, redeemFeeBps: 7, defaultRedeemFeeBps: 10, feePercent: 0.07 })
    // Permanent: the same on every ask; and the rewards' token inbox.
    expect((await call("GET", "/cashout/deposit-address", key.apiKey)).body).toEqual(account)
    expect((await db.query<{ t: string }>("SELECT token_inbox_address AS t FROM desk_members WHERE id = $1", [key.memberId]))[0]!.t).toBe(account.depositAddress)

    const saved = await call("POST", "/cashout/payout-address", key.apiKey, { payoutAddress: payout.toLowerCase() })
    expect(saved).toMatchObject({ status: 200, body: { payoutAddress: payout, depositAddress: account.depositAddress } })
    expect((await call("GET", "/cashout/payout-address", key.apiKey)).body.payoutAddress).toBe(payout)
    // A mixed-case address with a wrong checksum, and a ledger address, are refused; nothing changes.
    const badSum = payout.replace("E0F", "e0F")
    for (const bad of [badSum, account.depositAddress, "0x1234"]) {
      const r = await call("POST", "/cashout/payout-address", key.apiKey, { payoutAddress: bad })
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ code: "invalid_parameter", message: expect.stringMatching(/payoutAddress/) })
    }
    expect((await call("GET", "/cashout/payout-address", key.apiKey)).body.payoutAddress).toBe(payout)
    // Another member has other addresses.
    const other = await createDeskKey(db.url, { scopes: ["cashout"] })
    const theirs = (await call("GET", "/cashout/deposit-address", other.apiKey)).body
    expect(theirs.depositAddress).not.toBe(account.depositAddress)
    expect(theirs).toMatchObject({ redeemFeeBps: 10, feePercent: 0.1, payoutAddress: null })
  }, 60_000)

  it("needs a key with the cashout scope", async () => {
    const wrap = await createDeskKey(db.url, { scopes: ["wrap"] })
    expect((await call("GET", "/cashout/settings", undefined)).status).toBe(401)
    expect((await call("GET", "/cashout/settings", "x".repeat(64))).body.error.code).toBe("invalid_api_key")
    expect((await call("GET", "/cashout/settings", wrap.apiKey))).toMatchObject({ status: 403, body: { error: { code: "insufficient_scope" } } })
  })

  it("validates coupons without using them; a coupon only lowers the fee", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"], feeBps: 8 })
    const added = cliJson<{ code: string; feeBps: number; usesMax: number; uses: number }>(await cli(["desk", "coupons", "add", "--code", "half5", "--fee-bps", "5", "--uses", "1", "--json"], env()))
    expect(added).toMatchObject({ code: "HALF5", feeBps: 5, usesMax: 1, uses: 0 })
    await cli(["desk", "coupons", "add", "--code", "HIGH50", "--fee-bps", "50", "--json"], env())
    await cli(["desk", "coupons", "add", "--code", "GONE1", "--fee-bps", "1", "--expires-in", "1s", "--json"], env())
    for (let i = 0; i < 3; i++) {
      expect((await call("POST", "/cashout/coupon", key.apiKey, { code: "half5" })).body).toEqual({ code: "HALF5", valid: true, redeemFeeBps: 5, feePercent: 0.05, defaultRedeemFeeBps: 10 })
    }
    expect((await db.query<{ uses: number }>("SELECT uses FROM desk_coupons WHERE code = 'HALF5'"))[0]!.uses).toBe(0)
    // Above the member's fee: valid, but the fee stays the member's.
    expect((await call("POST", "/cashout/coupon", key.apiKey, { code: "HIGH50" })).body).toMatchObject({ valid: true, redeemFeeBps: 8 })
    await new Promise((r) => setTimeout(r, 1_100))
    expect((await call("POST", "/cashout/coupon", key.apiKey, { code: "GONE1" })).body).toMatchObject({ valid: false, redeemFeeBps: 8, reason: "the coupon has expired" })
    expect((await call("POST", "/cashout/coupon", key.apiKey, { code: "NOPE99" })).body).toMatchObject({ valid: false, reason: "no such coupon" })
    expect((await call("POST", "/cashout/coupon", key.apiKey, { code: "a b" })).status).toBe(400)
    // The CLI refuses bad coupons.
    expect(cliRefused(await cli(["desk", "coupons", "add", "--code", "X1", "--fee-bps", "5"], env()))).toMatch(/coupon code/)
    expect(cliRefused(await cli(["desk", "coupons", "add", "--code", "OK12", "--fee-bps", "10001"], env()))).toMatch(/--fee-bps/)
    expect(cliRefused(await cli(["desk", "coupons", "add", "--code", "HALF5", "--fee-bps", "3"], env()))).toMatch(/exists already/)
  }, 90_000)
})

describe("desk cash-out orders", () => {
  it("refuses bad input in the desk's shape and creates nothing", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    const before = await orderCount()
    const good = { amount: 12, chain: "base", payoutAddress: payout }
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, amount: 12.123456789 }, /decimal places/],
      [{ ...good, amount: 5 }, /between 10 and 1000000/],
      [{ ...good, amount: 2_000_000 }, /between 10 and 1000000/],
      [{ ...good, amount: -1 }, /plain positive decimal/],
      [{ ...good, amount: "1e3" }, /plain positive decimal/],
      [{ ...good, chain: "solana" }, /chain must be one of ethereum, base, bsc/],
      [{ ...good, payoutAddress: "0xnothex" }, /payoutAddress/],
      [{ ...good, refundAddress: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx" }, /legacy address starting with T/],
      [{ ...good, refundAddress: "T" + "1".repeat(33) }, /refundAddress/],
      [{ ...good, couponCode: "NOPE99" }, /no such coupon/],
      [{ amount: 12, chain: "base" }, /payoutAddress is required/]
    ]
    for (const [body, message] of cases) {
      const r = await call("POST", "/cashout/orders", key.apiKey, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.message, JSON.stringify(body)).toMatch(message)
    }
    expect((await call("POST", "/cashout/orders", key.apiKey, "{not json")).status).toBe(400)
    expect((await call("POST", "/cashout/orders", key.apiKey, { chain: "base" })).status).toBe(400)
    expect((await call("POST", "/cashout/orders", undefined, good)).status).toBe(401)
    expect(await orderCount()).toBe(before)
    // A paused token takes no orders.
    await cli(["desk", "tokens", "set", "--code", "SUSD", "--live", "false"], env())
    const paused = await call("POST", "/cashout/orders", key.apiKey, good)
    expect(paused.status).toBe(400)
    expect(paused.body.error.message).toMatch(/paused/)
    await cli(["desk", "tokens", "set", "--code", "SUSD", "--live", "true"], env())
    expect(await orderCount()).toBe(before)
    expect((await call("GET", "/cashout/orders/TX-ZZZZZZZZ", key.apiKey)).status).toBe(404)
    expect((await call("GET", "/cashout/orders/not-an-id", key.apiKey)).status).toBe(404)
  }, 90_000)

  it("cashes out end to end: deposit → confirmed → swept and burned → USDC paid, with signed callbacks", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"], callbackUrl: receiverUrl })
    const other = await createDeskKey(db.url, { scopes: ["cashout"] })
    await cli(["desk", "coupons", "add", "--code", "CASH3", "--fee-bps", "3", "--json"], env())
    const created = await call("POST", "/cashout/orders", key.apiKey, { amount: "25.5", chain: "base", payoutAddress: payout, couponCode: "cash3", source: "test" })
    expect(created.status).toBe(201)
    const order = created.body
    expect(order).toMatchObject({
      status: "awaiting_deposit", asset: "SUSD", memo: null, chain: "base", amount: "25.5", feeBps: 3,
      // fee = ceil(2550000000 × 3 / 10000) = 765000 base units = 0.00765; payout 25.49235 → 6 decimals, floor
      fee: "0.00765", payoutAmount: "25.49235", payoutAddress: payout, requiredConfirmations: 1, confirmations: 0
    })
    expect(order.shortRef).toMatch(/^TX-[0-9A-Z]{8}$/)
    expect([order.address, order.ledgerDepositAddress, order.sendTo]).toEqual([order.depositAddress, order.depositAddress, order.depositAddress])
    expect(validateLedgerAddress(order.depositAddress).valid).toBe(true)
    expect((await db.query<{ uses: number }>("SELECT uses FROM desk_coupons WHERE code = 'CASH3'"))[0]!.uses).toBe(1)
    // Only the creating key reads it.
    expect((await call("GET", `/cashout/orders/${order.id}`, other.apiKey)).status).toBe(403)
    expect((await call("GET", `/cashout/orders/${order.shortRef.toLowerCase()}`, key.apiKey)).body.id).toBe(order.id)

    const customer = await deskCustomer(node, db.url, "SUSD", 2_550_000_000n)
    const hot = await node.run(Effect.flatMap(EvmLedgers, (e) => e.get("base")))
    const usdc = devnetTokenAddress(hot.hotWallet, "USDC")
    const paidBefore = await node.run(hot.tokenBalance(usdc, payout))
    const depositTxid = await customer.send(order.depositAddress, 2_550_000_000n)

    const done = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.shortRef}`, key.apiKey)
      if (r.body.status === "paying") {
        await node.run(hot.mine(1))
        await mine(node)
      }
      return r.body.status === "released" ? r.body : undefined
    }, 60_000, "the order released")
    expect(done).toMatchObject({ depositTxid, amountReceived: "25.5", confirmations: 1, payoutAmount: "25.49235" })
    expect(done.burnTxid).toMatch(/^[0-9a-f]{64}$/)
    expect(done.payoutTxid).toMatch(/^0x[0-9a-f]{64}$/)
    expect(done.txids).toEqual({ depositTxid, mintTxid: null, burnTxid: done.burnTxid, payoutTxid: done.payoutTxid, refundTxid: null })
    // USDC (6 decimals on base) arrived exactly once; the token left circulation.
    expect(await node.run(hot.tokenBalance(usdc, payout)) - paidBefore).toBe(25_492_350n)
    const property = (await db.query<{ p: string }>("SELECT property_id::text AS p FROM desk_tokens WHERE code = 'SUSD'"))[0]!.p
    const burned = await node.run(Effect.flatMap(OmniView, (v) => Effect.zipRight(v.sync, v.tx(done.burnTxid))))
    expect(burned).toMatchObject({ valid: true, payload: { type: "revoke", property: Number(property), amount: 2_550_000_000n } })
    // Every leg was recorded; the milestones are order events and signed callbacks.
    expect((await db.query<{ leg: string }>("SELECT leg FROM desk_order_legs WHERE order_id = $1 ORDER BY recorded_at", [order.id])).map((r) => r.leg))
      .toEqual(["sweep", "burn", "payout"])
    const events = (await db.query<{ event: string }>("SELECT event FROM desk_order_events WHERE order_id = $1 ORDER BY id", [order.id])).map((r) => r.event)
    expect(events).toEqual(["created", "deposit_seen", "deposit_confirmed", "burned", "payout_sent"])
    const posted = await until(async () => {
      const got = received.filter((r) => JSON.parse(r.body).order?.id === order.id)
      return got.length >= 4 ? got : undefined
    }, 10_000, "four callbacks")
    expect(posted.map((r) => r.headers["x-svc-event"]).sort()).toEqual(["burned", "deposit_confirmed", "deposit_seen", "payout_sent"])
    for (const r of posted) {
      expect(verifyCallback(key.signingSecret, { timestamp: r.headers["x-svc-timestamp"] as string, signature: r.headers["x-svc-signature"] as string }, r.body, Math.floor(Date.now() / 1000))).toBe("ok")
    }
    const paidEvent = JSON.parse(posted.find((r) => r.headers["x-svc-event"] === "payout_sent")!.body)
    expect(paidEvent).toMatchObject({ type: "payout_sent", chain: "base", txid: done.payoutTxid, amount: 25.5, order: { id: order.id, payoutAmount: 25.49235 } })
  }, 120_000)

  it("refunds a deposit that is not the ordered amount in full, and expires an order that gets none", async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"], callbackUrl: receiverUrl })
    const customer = await deskCustomer(node, db.url, "SUSD", 2_000_000_000n)
    const property = Number((await db.query<{ p: string }>("SELECT property_id::text AS p FROM desk_tokens WHERE code = 'SUSD'"))[0]!.p)
    const order = (await call("POST", "/cashout/orders", key.apiKey, { amount: 12, chain: "ethereum", payoutAddress: payout, refundAddress: customer.address })).body
    await customer.send(order.depositAddress, 1_300_000_000n)
    const refunded = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
      if (r.body.status === "refunding") await mine(node)
      return r.body.status === "refunded" ? r.body : undefined
    }, 60_000, "the refund")
    expect(refunded).toMatchObject({ amountReceived: "13", payoutTxid: null, burnTxid: null })
    expect(refunded.refundTxid).toMatch(/^[0-9a-f]{64}$/)
    const sent = await node.run(Effect.flatMap(OmniView, (v) => Effect.zipRight(v.sync, v.tx(refunded.refundTxid))))
    expect(sent).toMatchObject({ valid: true, sender: order.depositAddress, reference: customer.address, payload: { type: "simpleSend", property, amount: 1_300_000_000n } })
    expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM desk_order_legs WHERE order_id = $1 AND leg <> 'refund'", [order.id]))[0]!.n).toBe(0)
    const events = (await db.query<{ event: string }>("SELECT event FROM desk_order_events WHERE order_id = $1 ORDER BY id", [order.id])).map((r) => r.event)
    expect(events).toEqual(["created", "deposit_seen", "deposit_confirmed", "refund_sent"])

    // No deposit within the window: expired (the window's end moved into the past, as time would).
    const idle = (await call("POST", "/cashout/orders", key.apiKey, { amount: 10, chain: "bsc", payoutAddress: payout })).body
    expect(Date.parse(idle.expiresAt) - Date.parse(idle.createdAt)).toBe(60 * 60_000)
    // USDC on bsc has 18 decimals: the payout is fixed in those.
    expect(idle.payoutAmount).toBe("9.99")
    expect((await db.query<{ p: string }>("SELECT payout::text AS p FROM desk_orders WHERE id = $1", [idle.id]))[0]!.p).toBe("9990000000000000000")
    await db.query("UPDATE desk_orders SET expires_at = now() - interval '1 second' WHERE id = $1", [idle.id])
    expect((await call("GET", `/cashout/orders/${idle.id}`, key.apiKey)).body.status).toBe("expired")
    await until(async () => received.some((r) => r.headers["x-svc-event"] === "expired" && JSON.parse(r.body).order.id === idle.id) ? true : undefined, 10_000, "the expired callback")
  }, 120_000)
})
