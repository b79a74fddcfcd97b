// Wrapping through a real node on its devnets: the wrappable assets without a key; a BTC wrap
// (the coin in at the order's own BTC address, the registry's confirmations, wBTC granted to the
// payout address on the ledger) read by uuid or TX- reference, the caller's reference echoed;
// bad input refused in the desk's shape with nothing created; a wrong LTC deposit refunded to the
// refundAddress less the network fee, and one without a refundAddress failed for an operator.
import { ECPairFactory } from "ecpair"
import { Effect, Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { p2pkhAddressOfPubkey, validateLedgerAddress } from "../../src/chain/address.ts"
import { CoinLedgers } from "../../src/chain/ledger/CoinLedgers.ts"
import { p2pkhSweepVsize } from "../../src/desk/orders/refunds.ts"
import { coinChains } from "../../src/chain/params.ts"
import { DevnetChains } from "../../src/platform/devnet/DevnetChains.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { mine, omniBalance, until } from "../support/omniWorld.ts"
import { createDeskKey } from "../support/services.ts"
import { deskCaller, deskOrderCount } from "../support/deskHttp.ts"

let db: TestDatabase
let node: RunningNode

const call = deskCaller(() => node.deskUrl)
const orderCount = () => deskOrderCount(db)

beforeAll(async () => {
  db = await createTestDatabase("deskwrap")
  node = await startNode(db.url)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("desk wrapping", () => {
  it("lists the wrappable assets without a key", async () => {
    const r = await call("GET", "/wrap/assets", undefined)
    expect(r.status).toBe(200)
    expect(r.body.assets.map((a: any) => [a.asset, a.wrapped, a.network, a.wrappable])).toEqual([
      ["BTC", "wBTC", "bitcoin", true], ["ETH", "wETH", "ethereum", true], ["LTC", "wLTC", "litecoin", true]
    ])
    expect(r.body.assets[0]).toMatchObject({ requiredConfirmations: 2, minAmount: "0.0001", maxAmount: "10", wrapFeeBps: 10, unwrapFeeBps: 10, live: true, reserves: "0", wrappedSupply: "0", collateralization: null })
  })

  it("refuses bad input in the desk's shape and creates nothing", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const stablesOnly = await createDeskKey(db.url, { scopes: ["stables"] })
    const good = { direction: "wrap", asset: "BTC", amount: "0.5", payoutAddress: randomLedgerKey().address }
    const before = await orderCount()
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, direction: "sideways" }, /direction must be wrap or unwrap/],
      [{ ...good, asset: "DOGE" }, /asset must be BTC, LTC or ETH/],
      // An ETH wrap's refund address is an ETH address; an unwrap's payout address is its coin's.
      [{ ...good, asset: "ETH", refundAddress: randomLedgerKey().address }, /refundAddress \(an ETH address\)/],
      [{ ...good, direction: "unwrap" }, /payoutAddress \(a BTC address\)/],
      [{ ...good, payoutAddress: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx" }, /legacy address starting with T/],
      [{ ...good, refundAddress: randomLedgerKey().address }, /refundAddress \(a BTC address\)/],
      [{ ...good, amount: "0.00001" }, /between 0.0001 and 10/],
      [{ ...good, amount: "0.123456789" }, /decimal places/]
    ]
    for (const [body, message] of cases) {
      const r = await call("POST", "/wrap/orders", key.apiKey, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.message, JSON.stringify(body)).toMatch(message)
    }
    expect((await call("POST", "/wrap/orders", stablesOnly.apiKey, good)).status).toBe(403)
    expect(await orderCount()).toBe(before)
  })

  it("wraps BTC: the coin in at the order's address, confirmed, wBTC granted", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const other = await createDeskKey(db.url, { scopes: ["wrap"] })
    const payoutAddress = randomLedgerKey().address
    const created = await call("POST", "/wrap/orders", key.apiKey, { direction: "wrap", asset: "btc", amount: 0.5, payoutAddress, reference: "invoice-77" })
    expect(created.status).toBe(201)
    const order = created.body
    expect(order).toMatchObject({ kind: "wrap", asset: "wBTC", chain: "btc", reference: "invoice-77", amount: "0.5", fee: "0.0005", payoutAmount: "0.4995", requiredConfirmations: 2 })
    expect(order.sendTo).toBe(order.depositAddress)
    expect(validateLedgerAddress(order.depositAddress, coinChains.btc.params).valid).toBe(true)
    expect((await call("GET", `/wrap/orders/${order.id}`, other.apiKey)).status).toBe(403)
    // A wrap order is read on the wrap route, not the cash-out one.
    expect((await call("GET", `/cashout/orders/${order.id}`, key.apiKey)).status).toBe(404)

    const depositTxid = await node.run(Effect.flatMap(DevnetChains, (c) => c.pay("btc", order.depositAddress, "0.5", undefined)))
    const done = await until(async () => {
      const r = await call("GET", `/wrap/orders/${order.shortRef}`, key.apiKey)
      if (["awaiting_deposit", "deposit_seen"].includes(r.body.status)) await node.run(Effect.flatMap(DevnetChains, (c) => c.mine("btc", 1)))
      if (r.body.status === "paying") await mine(node)
      return r.body.status === "released" ? r.body : undefined
    }, 60_000, "the wrap released")
    expect(done).toMatchObject({ depositTxid, reference: "invoice-77", amountReceived: "0.5", confirmations: 2, payoutTxid: null })
    expect(done.mintTxid).toMatch(/^[0-9a-f]{64}$/)
    const property = Number((await db.query<{ p: string }>("SELECT property_id::text AS p FROM desk_tokens WHERE code = 'wBTC'"))[0]!.p)
    expect(await omniBalance(node, payoutAddress, property)).toBe(49_950_000n)
    // The registry answers from the desk's reserves scan (every deposit address), cached up to 30 s per node.
    const deadline = Date.now() + 60_000
    let btc = (await call("GET", "/wrap/assets", undefined)).body.assets[0]
    while (Date.now() < deadline && btc.wrappedSupply !== "0.4995") {
      await new Promise((r) => setTimeout(r, 1_000))
      btc = (await call("GET", "/wrap/assets", undefined)).body.assets[0]
    }
    expect(btc).toMatchObject({ reserves: "0.5", wrappedSupply: "0.4995" })
    expect(btc.collateralization).toBeCloseTo(1.001001, 6)
  }, 90_000)

  it("refunds a wrap deposit of the wrong amount to the refundAddress, less the network fee; without one the order fails with the reason", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const refundAddress = Either.getOrThrow(p2pkhAddressOfPubkey(ECPairFactory(ecc).makeRandom().publicKey, coinChains.ltc.params))
    const withRefund = (await call("POST", "/wrap/orders", key.apiKey, { direction: "wrap", asset: "LTC", amount: "0.3", payoutAddress: randomLedgerKey().address, refundAddress })).body
    const without = (await call("POST", "/wrap/orders", key.apiKey, { direction: "wrap", asset: "LTC", amount: "0.3", payoutAddress: randomLedgerKey().address })).body
    expect(withRefund).toMatchObject({ status: "awaiting_deposit", refundAddress, requiredConfirmations: 6 })
    const pay = (to: string, amount: string) => node.run(Effect.flatMap(DevnetChains, (c) => c.pay("ltc", to, amount, undefined)))
    const depositTxid = await pay(withRefund.depositAddress, "0.31")
    await pay(without.depositAddress, "0.25")
    const settled = (id: string) => async () => {
      const r = await call("GET", `/wrap/orders/${id}`, key.apiKey)
      return ["refunded", "failed", "released"].includes(r.body.status) ? r.body : undefined
    }
    const done = await until(async () => {
      await node.run(Effect.flatMap(DevnetChains, (c) => c.mine("ltc", 1)))
      const a = await settled(withRefund.id)()
      const b = await settled(without.id)()
      return a !== undefined && b !== undefined ? [a, b] as const : undefined
    }, 90_000, "both wraps settled")
    const [refunded, failed] = done
    expect(refunded).toMatchObject({ status: "refunded", depositTxid, amountReceived: "0.31", mintTxid: null, failure: null })
    expect(refunded.refundTxid).toMatch(/^[0-9a-f]{64}$/)
    // The deposit's coins, less the fee of a one-input P2PKH spend at the chain's minimum rate.
    const ltc = await node.run(Effect.map(CoinLedgers, (c) => c.get("ltc")))
    const received = (await node.run(ltc.listUnspent([refundAddress]))).filter((u) => u.txid === refunded.refundTxid)
    expect(received.map((u) => u.value)).toEqual([31_000_000n - p2pkhSweepVsize(1) * coinChains.ltc.params.minFeeRateSatPerVb])
    expect(await node.run(ltc.listUnspent([withRefund.depositAddress]))).toEqual([])
    const legs = await db.query<{ leg: string; chain: string; txid: string }>("SELECT leg, chain, txid FROM desk_order_legs WHERE order_id = $1", [withRefund.id])
    expect(legs).toEqual([{ leg: "refund", chain: "ltc", txid: refunded.refundTxid }])
    // No refund address: nothing is sent anywhere; the coins wait at the order's address for an operator.
    expect(failed).toMatchObject({ status: "failed", amountReceived: "0.25", refundTxid: null, failure: expect.stringMatching(/named no refundAddress/) })
    expect((await node.run(ltc.listUnspent([without.depositAddress]))).map((u) => u.value)).toEqual([25_000_000n])
    expect((await db.query("SELECT 1 FROM desk_order_legs WHERE order_id = $1", [without.id])).length).toBe(0)
    const events = (await db.query<{ event: string }>("SELECT event FROM desk_order_events WHERE order_id = $1 ORDER BY id", [without.id])).map((r) => r.event)
    expect(events).toEqual(["created", "deposit_seen", "deposit_confirmed", "failed"])
  }, 120_000)
})
