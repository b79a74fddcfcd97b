// Dollar tokens through a real node on its devnets: the registry without a key; a mint (USDC in
// at the order's freshly derived EVM address, confirmed, the token granted to the recipient on
// the ledger) and a redeem (the token in at the order's ledger address, burned, USDC paid), both
// polled with the cash-out order endpoint by the creating key; bad input refused, nothing made;
// a wrong or late mint deposit refunded on its chain (to its sender, or to the refundAddress).
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { encodeFunctionData, erc20Abi, hexToBytes } from "viem"
import { generatePrivateKey as newKey, privateKeyToAccount } from "viem/accounts"
import { EvmLedgers } from "../../src/chain/evm/EvmLedger.ts"
import { devnetTokenAddress } from "../../src/chain/evm/devnetTokens.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { deskCustomer } from "../support/deskCustomer.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { mine, omniBalance, until } from "../support/omniWorld.ts"
import { createDeskKey } from "../support/services.ts"
import { deskCaller, deskOrderCount } from "../support/deskHttp.ts"

/** Customer keys by address (a test wallet signs its own deposit). */
const customerKeys = new Map<string, `0x${string}`>()
const generatePrivateKey = (): `0x${string}` => {
  const k = newKey()
  customerKeys.set(privateKeyToAccount(k).address, k)
  return k
}

let db: TestDatabase
let node: RunningNode
const payout = "0x52908400098527886E0F7030069857D2E4169EE7"

const call = deskCaller(() => node.deskUrl)
const orderCount = () => deskOrderCount(db)

beforeAll(async () => {
  db = await createTestDatabase("deskstables")
  node = await startNode(db.url)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("desk dollar tokens", () => {
  it("lists the registry without a key", async () => {
    const r = await call("GET", "/stables/assets", undefined)
    expect(r.status).toBe(200)
    expect(r.body.assets.map((a: any) => a.asset)).toEqual(["SUSD", "XUSD"])
    expect(r.body.assets[1]).toMatchObject({
      asset: "XUSD", live: true, minAmount: "25", maxAmount: "250000", mintFeeBps: 5, redeemFeeBps: 20,
      acceptedDeposits: ["USDC", "USDT", "PYUSD", "DAI"], depositChains: ["ethereum", "base", "bsc"], circulatingSupply: "0"
    })
    expect(r.body.assets[1].propertyId).toBeGreaterThan(0)
  })

  it("refuses bad input in the desk's shape and creates nothing", async () => {
    const key = await createDeskKey(db.url, { scopes: ["stables"] })
    const cashoutOnly = await createDeskKey(db.url, { scopes: ["cashout"] })
    const recipient = randomLedgerKey().address
    const mint = { asset: "XUSD", direction: "mint", chain: "base", token: "USDC", recipient, amount: 30 }
    const before = await orderCount()
    const cases: Array<[unknown, RegExp]> = [
      [{ ...mint, direction: "burn" }, /direction must be mint or redeem/],
      [{ ...mint, asset: "EURX" }, /dollar token of the registry/],
      [{ ...mint, asset: "wBTC" }, /dollar token of the registry/],
      [{ ...mint, token: "EUROC" }, /token must be one of USDC, USDT, PYUSD, DAI/],
      [{ ...mint, recipient: undefined }, /recipient is required/],
      [{ ...mint, recipient: "tltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9" }, /legacy address starting with T/],
      [{ ...mint, chain: "tron" }, /chain must be one of/],
      [{ ...mint, amount: 30.1234567 }, /decimal places/],
      [{ ...mint, amount: 10 }, /between 25 and 250000/],
      [{ asset: "XUSD", direction: "redeem", chain: "base", amount: 30 }, /payoutAddress is required for redeem/]
    ]
    for (const [body, message] of cases) {
      const r = await call("POST", "/stables/orders", key.apiKey, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.message, JSON.stringify(body)).toMatch(message)
    }
    expect((await call("POST", "/stables/orders", cashoutOnly.apiKey, mint)).status).toBe(403)
    expect(await orderCount()).toBe(before)
  })

  it("mints: USDC in at a fresh EVM address, confirmed, the token granted to the recipient", async () => {
    const key = await createDeskKey(db.url, { scopes: ["stables"] })
    const recipient = randomLedgerKey().address
    const created = await call("POST", "/stables/orders", key.apiKey, { asset: "XUSD", direction: "mint", chain: "base", token: "USDC", recipient, amount: 30 })
    expect(created.status).toBe(201)
    const order = created.body
    expect(order).toMatchObject({ kind: "mint", status: "awaiting_deposit", asset: "XUSD", chain: "base", amount: "30", fee: "0.015", payoutAmount: "29.985", payoutAddress: recipient, requiredConfirmations: 3 })
    expect(order.depositAddress).toMatch(/^0x[0-9a-fA-F]{40}$/)
    const again = await call("POST", "/stables/orders", key.apiKey, { asset: "XUSD", direction: "mint", chain: "base", token: "USDC", recipient, amount: 30 })
    expect(again.body.depositAddress).not.toBe(order.depositAddress)

    const base = await node.run(Effect.flatMap(EvmLedgers, (e) => e.get("base")))
    const depositTxid = await node.run(base.erc20Transfer(devnetTokenAddress(base.hotWallet, "USDC"), order.depositAddress, 30_000_000n))
    const done = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.shortRef}`, key.apiKey)
      if (r.body.status === "deposit_seen") await node.run(base.mine(1))
      if (r.body.status === "paying") await mine(node)
      return r.body.status === "released" ? r.body : undefined
    }, 60_000, "the mint released")
    expect(done).toMatchObject({ depositTxid, amountReceived: "30", confirmations: 3, payoutTxid: null })
    expect(done.mintTxid).toMatch(/^[0-9a-f]{64}$/)
    const property = Number((await db.query<{ p: string }>("SELECT property_id::text AS p FROM desk_tokens WHERE code = 'XUSD'"))[0]!.p)
    expect(await omniBalance(node, recipient, property)).toBe(2_998_500_000n)
    expect((await db.query<{ leg: string }>("SELECT leg FROM desk_order_legs WHERE order_id = $1", [order.id])).map((r) => r.leg)).toEqual(["payout"])
    // The registry answers from the desk's reserves scan, cached up to 30 s per node.
    const deadline = Date.now() + 60_000
    let supply = ""
    while (Date.now() < deadline && (supply = (await call("GET", "/stables/assets", undefined)).body.assets[1].circulatingSupply) !== "29.985") await new Promise((r) => setTimeout(r, 1_000))
    expect(supply).toBe("29.985")
  }, 90_000)

  it("redeems: the token in, burned, USDC paid; polled with the cash-out endpoint", async () => {
    const key = await createDeskKey(db.url, { scopes: ["stables"] })
    const customer = await deskCustomer(node, db.url, "XUSD", 2_500_000_000n)
    const created = await call("POST", "/stables/orders", key.apiKey, { asset: "xusd", direction: "redeem", chain: "ethereum", payoutAddress: payout, amount: "25" })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ kind: "redeem", asset: "XUSD", fee: "0.05", payoutAmount: "24.95" })
    const eth = await node.run(Effect.flatMap(EvmLedgers, (e) => e.get("ethereum")))
    const usdc = devnetTokenAddress(eth.hotWallet, "USDC")
    const before = await node.run(eth.tokenBalance(usdc, payout))
    await customer.send(created.body.depositAddress, 2_500_000_000n)
    const done = await until(async () => {
      const r = await call("GET", `/cashout/orders/${created.body.id}`, key.apiKey)
      if (r.body.status === "paying") {
        await node.run(eth.mine(1))
        await mine(node)
      }
      return r.body.status === "released" ? r.body : undefined
    }, 60_000, "the redeem released")
    expect(done.burnTxid).toMatch(/^[0-9a-f]{64}$/)
    expect(await node.run(eth.tokenBalance(usdc, payout)) - before).toBe(24_950_000n)
  }, 90_000)

  it("refunds a mint deposit of the wrong amount to its sender: gas topped up, then the stablecoin back from the order's address, both legs recorded", async () => {
    const key = await createDeskKey(db.url, { scopes: ["stables"] })
    const recipient = randomLedgerKey().address
    const order = (await call("POST", "/stables/orders", key.apiKey, { asset: "XUSD", direction: "mint", chain: "bsc", token: "USDT", recipient, amount: "40" })).body
    expect(order).toMatchObject({ status: "awaiting_deposit", amount: "40", network: "bsc (USDT ERC-20)" })
    const bsc = await node.run(Effect.flatMap(EvmLedgers, (e) => e.get("bsc")))
    const usdt = devnetTokenAddress(bsc.hotWallet, "USDT")
    // A customer wallet of its own (not the hot wallet): its tokens and gas come from the hot wallet.
    const customer = privateKeyToAccount(generatePrivateKey())
    await node.run(bsc.erc20Transfer(usdt, customer.address, 41_000_000n))
    await node.run(bsc.sendRecorded({ to: customer.address, value: 10n ** 16n }, () => Effect.void))
    await node.run(bsc.mine(1))
    const depositTxid = await node.run(bsc.sendRecorded({
      to: usdt, signerKey: hexToBytes(customerKeys.get(customer.address)!),
      data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [order.depositAddress, 41_000_000n] })
    }, () => Effect.void))
    const refunded = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
      if (["deposit_seen", "refunding"].includes(r.body.status)) await node.run(bsc.mine(1))
      return r.body.status === "refunded" ? r.body : r.body.status === "failed" ? r.body : undefined
    }, 60_000, "the mint refunded")
    expect(refunded).toMatchObject({ status: "refunded", depositTxid, amountReceived: "41", mintTxid: null, failure: null })
    expect(refunded.refundTxid).toMatch(/^0x[0-9a-f]{64}$/)
    // The whole deposit went back to its sender; the order's address keeps none of it.
    expect(await node.run(bsc.tokenBalance(usdt, customer.address))).toBe(41_000_000n)
    expect(await node.run(bsc.tokenBalance(usdt, order.depositAddress))).toBe(0n)
    const legs = await db.query<{ leg: string; txid: string; nonce: number; sender: string }>(
      "SELECT leg, txid, nonce, sender FROM desk_order_legs WHERE order_id = $1 ORDER BY recorded_at", [order.id])
    expect(legs.map((l) => [l.leg, l.sender.toLowerCase()])).toEqual([["refund_gas", bsc.hotWallet.toLowerCase()], ["refund", order.depositAddress.toLowerCase()]])
    expect(legs[1]).toMatchObject({ txid: refunded.refundTxid, nonce: 0 })
    expect(await node.run(bsc.confirmations(legs[0]!.txid))).toBeGreaterThan(0)
    const events = (await db.query<{ event: string }>("SELECT event FROM desk_order_events WHERE order_id = $1 ORDER BY id", [order.id])).map((r) => r.event)
    expect(events).toEqual(["created", "deposit_seen", "deposit_confirmed", "refund_sent"])
  }, 90_000)

  it("refunds a late mint deposit to the order's refundAddress (EIP-55 checked at creation)", async () => {
    const key = await createDeskKey(db.url, { scopes: ["stables"] })
    const recipient = randomLedgerKey().address
    const body = { asset: "XUSD", direction: "mint", chain: "base", token: "USDC", recipient, amount: "30" }
    const before = await orderCount()
    const badChecksum = await call("POST", "/stables/orders", key.apiKey, { ...body, refundAddress: payout.replace("E0F", "e0F") })
    expect(badChecksum.status).toBe(400)
    expect(badChecksum.body.error.message).toMatch(/refundAddress \(an EVM address on base\)/)
    expect((await call("POST", "/stables/orders", key.apiKey, { ...body, refundAddress: "T" + "1".repeat(33) })).status).toBe(400)
    expect(await orderCount()).toBe(before)
    const refundTo = privateKeyToAccount(generatePrivateKey()).address
    const order = (await call("POST", "/stables/orders", key.apiKey, { ...body, refundAddress: refundTo.toLowerCase() })).body
    expect(order.refundAddress).toBe(refundTo)
    // The window passes (the database's clock decides expiry).
    await db.query("UPDATE desk_orders SET expires_at = now() - interval '1 second' WHERE id = $1", [order.id])
    await until(async () => (await call("GET", `/cashout/orders/${order.id}`, key.apiKey)).body.status === "expired" || undefined, 30_000, "expired")
    const base = await node.run(Effect.flatMap(EvmLedgers, (e) => e.get("base")))
    const usdc = devnetTokenAddress(base.hotWallet, "USDC")
    await node.run(base.erc20Transfer(usdc, order.depositAddress, 30_000_000n))
    const refunded = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
      await node.run(base.mine(1))
      return ["refunded", "failed"].includes(r.body.status) ? r.body : undefined
    }, 60_000, "the late mint refunded")
    expect(refunded).toMatchObject({ status: "refunded", amountReceived: "30", mintTxid: null })
    expect(await node.run(base.tokenBalance(usdc, refundTo))).toBe(30_000_000n)
    const events = (await db.query<{ event: string }>("SELECT event FROM desk_order_events WHERE order_id = $1 ORDER BY id", [order.id])).map((r) => r.event)
    expect(events).toEqual(["created", "expired", "deposit_seen", "deposit_confirmed", "refund_sent"])
  }, 90_000)
})
