// Unwrapping and ETH wrapping through a real node on its devnets. Unwrap: the wrapped token sent
// to the order's own ledger address, confirmed, swept to the issuer and revoked (the supply falls
// by the amount), the native coin paid from the desk's hot vault (BTC, LTC; topped up by the
// devnet faucet on demand) or the EVM hot wallet (ETH), exactly amount − fee at the payout
// address, the payout recorded in desk_order_legs before it was sent. Two LTC unwraps at once
// from the same hot vault spend no coin twice. A wrong amount is refunded on the ledger. ETH
// wrap: native ETH at a fresh per-order EVM address, 12 confirmations, wETH granted. Bad input
// is refused in the desk's shape and creates nothing.
import { Transaction } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import { Effect, Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { hexToBytes } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { p2pkhAddressOfPubkey } from "../../src/chain/address.ts"
import { EvmLedgers } from "../../src/chain/evm/EvmLedger.ts"
import { CoinLedgers } from "../../src/chain/ledger/CoinLedgers.ts"
import { type CoinChain, coinChains } from "../../src/chain/params.ts"
import { coinPayoutLeg } from "../../src/desk/orders/coinPayout.ts"
import { DeskWallets } from "../../src/desk/wallets/DeskWallets.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import { DevnetChains } from "../../src/platform/devnet/DevnetChains.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { deskCustomer } from "../support/deskCustomer.ts"
import { mine, omniBalance, until } from "../support/omniWorld.ts"
import { createDeskKey, runWithDb } from "../support/services.ts"
import { deskCaller, deskOrderCount } from "../support/deskHttp.ts"

const ECPair = ECPairFactory(ecc)

let db: TestDatabase
let node: RunningNode

const call = deskCaller(() => node.deskUrl)
const orderCount = () => deskOrderCount(db)

const freshCoinAddress = (chain: CoinChain): string => Either.getOrThrow(p2pkhAddressOfPubkey(ECPair.makeRandom().publicKey, coinChains[chain].params))
const freshEvmAddress = (): string => privateKeyToAccount(generatePrivateKey()).address

const coinBalance = (chain: CoinChain, address: string) =>
  node.run(Effect.map(Effect.flatMap(CoinLedgers, (c) => c.get(chain).listUnspent([address])), (us) => us.reduce((n, u) => n + u.value, 0n)))
const mineChain = (chain: "btc" | "ltc" | "ethereum", blocks = 1) => node.run(Effect.flatMap(DevnetChains, (c) => c.mine(chain, blocks)))
const propertyOf = async (code: string) => Number((await db.query<{ p: string }>(`SELECT property_id::text AS p FROM desk_tokens WHERE code = '${code}'`))[0]!.p)
const supplyOf = (property: number) =>
  node.run(Effect.gen(function*() {
    const view = yield* OmniView
    yield* view.sync
    return (yield* view.property(property))?.totalTokens ?? 0n
  }))

/** Polls the wrap order until it is `status`, moving the chains it waits on. */
const settle = (apiKey: string, id: string, status: string, chain: "btc" | "ltc" | "ethereum") =>
  until(async () => {
    const r = await call("GET", `/wrap/orders/${id}`, apiKey)
    if (r.body.status === status) return r.body
    if (["failed", "released", "refunded"].includes(r.body.status)) throw new Error(`order ${id} ended ${r.body.status}: ${r.body.failure}`)
    // The ledger carries the token deposit, the burn and the refund; the coin chain the payout (and the hot vault's top-up).
    await mine(node)
    await mineChain(chain, chain === "ethereum" ? 2 : 1)
    return undefined
  }, 90_000, `order ${id} ${status}`, 500)

beforeAll(async () => {
  db = await createTestDatabase("deskunwrap")
  node = await startNode(db.url)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("desk unwrapping and ETH wrapping", () => {
  it("refuses bad unwrap input in the desk's shape and creates nothing", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const good = { direction: "unwrap", asset: "BTC", amount: "0.5", payoutAddress: freshCoinAddress("btc") }
    const before = await orderCount()
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, asset: "DOGE" }, /asset must be BTC, LTC or ETH/],
      [{ ...good, payoutAddress: randomLedgerKey().address }, /payoutAddress \(a BTC address\)/],
      [{ ...good, payoutAddress: "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080" }, /payoutAddress \(a BTC address\)/],
      [{ ...good, payoutAddress: "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2" }, /payoutAddress \(a BTC address\)/],
      [{ ...good, payoutAddress: freshEvmAddress() }, /payoutAddress \(a BTC address\)/],
      [{ ...good, asset: "ETH", payoutAddress: freshCoinAddress("btc") }, /payoutAddress \(an ETH address\) must be an EVM address/],
      [{ ...good, asset: "ETH", payoutAddress: "0x52908400098527886E0F7030069857D2E4169EE7".replace("E7", "e7") }, /checksum/i],
      [{ ...good, refundAddress: freshCoinAddress("btc") }, /refundAddress/],
      [{ ...good, amount: "0.00001" }, /between 0.0001 and 10/],
      [{ ...good, amount: "11" }, /between 0.0001 and 10/],
      [{ ...good, amount: "0.123456789" }, /decimal places/],
      [{ ...good, asset: "LTC", amount: "0.001", payoutAddress: freshCoinAddress("ltc") }, /between 0.01 and 1000/]
    ]
    for (const [body, message] of cases) {
      const r = await call("POST", "/wrap/orders", key.apiKey, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.code, JSON.stringify(body)).toBe("invalid_parameter")
      expect(r.body.error.message, JSON.stringify(body)).toMatch(message)
    }
    expect(await orderCount()).toBe(before)
  })

  it("unwraps BTC: wBTC in at the order's ledger address, burned, BTC paid from the hot vault, exactly amount − fee", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const property = await propertyOf("wBTC")
    const customer = await deskCustomer(node, db.url, "wBTC", 80_000_000n)
    const payoutAddress = freshCoinAddress("btc")
    const created = await call("POST", "/wrap/orders", key.apiKey, { direction: "unwrap", asset: "BTC", amount: 0.5, payoutAddress, reference: "unwrap-1" })
    expect(created.status).toBe(201)
    const order = created.body
    expect(order).toMatchObject({ kind: "unwrap", status: "awaiting_deposit", asset: "wBTC", chain: "btc", amount: "0.5", fee: "0.0005", payoutAmount: "0.4995", payoutAddress, refundAddress: expect.stringMatching(/^T/), requiredConfirmations: 1, reference: "unwrap-1" })
    // The token comes in on the ledger: the order's own ledger address.
    expect(order.depositAddress).toMatch(/^T/)
    expect(order.sendTo).toBe(order.depositAddress)
    const supplyBefore = await supplyOf(property)

    const depositTxid = await customer.send(order.depositAddress, 50_000_000n)
    const done = await settle(key.apiKey, order.shortRef, "released", "btc")
    expect(done).toMatchObject({ depositTxid, amountReceived: "0.5", mintTxid: null, reference: "unwrap-1" })
    expect(done.burnTxid).toMatch(/^[0-9a-f]{64}$/)
    expect(done.payoutTxid).toMatch(/^[0-9a-f]{64}$/)
    // Burned: the supply fell by exactly the amount; the customer kept the rest.
    expect(supplyBefore - (await supplyOf(property))).toBe(50_000_000n)
    expect(await omniBalance(node, customer.address, property)).toBe(30_000_000n)
    // Paid: exactly 0.4995 BTC at the payout address, by the recorded transaction.
    expect(await coinBalance("btc", payoutAddress)).toBe(49_950_000n)
    const legs = await db.query<{ leg: string; chain: string; txid: string; raw: string }>(`SELECT leg, chain, txid, raw FROM desk_order_legs WHERE order_id = '${order.id}'`)
    expect(legs.map((l) => [l.leg, l.chain]).sort()).toEqual([["burn", "ledger"], ["payout", "btc"], ["sweep", "ledger"]])
    const payout = legs.find((l) => l.leg === "payout")!
    expect(payout.txid).toBe(done.payoutTxid)
    const onChain = await node.run(Effect.flatMap(CoinLedgers, (c) => c.get("btc").getTx(done.payoutTxid)))
    expect(onChain.hex).toBe(payout.raw)
    const events = (await db.query<{ event: string }>(`SELECT event FROM desk_order_events WHERE order_id = '${order.id}' ORDER BY id`)).map((e) => e.event)
    expect(events).toEqual(["created", "deposit_seen", "deposit_confirmed", "burned", "payout_sent"])
  }, 150_000)

  it("two LTC unwraps at once from the same hot vault: both paid, exactly, and no coin spent twice", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const property = await propertyOf("wLTC")
    const customer = await deskCustomer(node, db.url, "wLTC", 500_000_000n)
    const to = [freshCoinAddress("ltc"), freshCoinAddress("ltc")]
    const orders = await Promise.all(to.map((payoutAddress, i) =>
      call("POST", "/wrap/orders", key.apiKey, { direction: "unwrap", asset: "ltc", amount: i === 0 ? "1.5" : "2", payoutAddress })))
    for (const o of orders) expect(o.status).toBe(201)
    const supplyBefore = await supplyOf(property)
    await customer.send(orders[0]!.body.depositAddress, 150_000_000n)
    await customer.send(orders[1]!.body.depositAddress, 200_000_000n)
    const done = await Promise.all(orders.map((o) => settle(key.apiKey, o.body.id, "released", "ltc")))
    expect(done.map((d) => d.payoutAmount)).toEqual(["1.4985", "1.998"])
    expect(await coinBalance("ltc", to[0]!)).toBe(149_850_000n)
    expect(await coinBalance("ltc", to[1]!)).toBe(199_800_000n)
    expect(supplyBefore - (await supplyOf(property))).toBe(350_000_000n)
    // The two recorded payouts spend different coins.
    const raws = await db.query<{ raw: string }>(`SELECT raw FROM desk_order_legs WHERE leg = 'payout' AND order_id IN ('${orders[0]!.body.id}', '${orders[1]!.body.id}')`)
    const spent = raws.flatMap((r) => Transaction.fromHex(r.raw).ins.map((i) => `${Buffer.from(i.hash).reverse().toString("hex")}:${i.index}`))
    expect(spent.length).toBeGreaterThanOrEqual(2)
    expect(new Set(spent).size).toBe(spent.length)
  }, 150_000)

  it("refunds an unwrap deposit of the wrong amount to the refund address on the ledger, burning and paying nothing", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const property = await propertyOf("wBTC")
    const customer = await deskCustomer(node, db.url, "wBTC", 30_000_000n)
    const payoutAddress = freshCoinAddress("btc")
    const created = await call("POST", "/wrap/orders", key.apiKey, { direction: "unwrap", asset: "BTC", amount: "0.5", payoutAddress, refundAddress: customer.address })
    expect(created.status).toBe(201)
    const supplyBefore = await supplyOf(property)
    await customer.send(created.body.depositAddress, 30_000_000n)
    expect(await omniBalance(node, customer.address, property)).toBe(0n)
    const done = await settle(key.apiKey, created.body.id, "refunded", "btc")
    expect(done).toMatchObject({ amountReceived: "0.3", burnTxid: null, payoutTxid: null, refundAddress: customer.address })
    expect(done.refundTxid).toMatch(/^[0-9a-f]{64}$/)
    expect(await omniBalance(node, customer.address, property)).toBe(30_000_000n)
    expect(await supplyOf(property)).toBe(supplyBefore)
    expect(await coinBalance("btc", payoutAddress)).toBe(0n)
  }, 150_000)

  it("wraps ETH: native ETH in at the order's own EVM address, 12 confirmations, wETH granted", async () => {
    const assets = await call("GET", "/wrap/assets", undefined)
    expect(assets.body.assets.find((a: any) => a.asset === "ETH")).toMatchObject({ wrapped: "wETH", wrappable: true, requiredConfirmations: 12 })
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const property = await propertyOf("wETH")
    const payoutAddress = randomLedgerKey().address
    const created = await call("POST", "/wrap/orders", key.apiKey, { direction: "wrap", asset: "ETH", amount: "0.25", payoutAddress })
    expect(created.status).toBe(201)
    const order = created.body
    expect(order).toMatchObject({ kind: "wrap", asset: "wETH", chain: "ethereum", amount: "0.25", fee: "0.00025", payoutAmount: "0.24975", requiredConfirmations: 12 })
    expect(order.depositAddress).toMatch(/^0x[0-9a-fA-F]{40}$/)
    // Another order's address is another address.
    const second = await call("POST", "/wrap/orders", key.apiKey, { direction: "wrap", asset: "ETH", amount: "0.25", payoutAddress })
    expect(second.body.depositAddress).not.toBe(order.depositAddress)

    const depositTxid = await node.run(Effect.flatMap(DevnetChains, (c) => c.pay("ethereum", order.depositAddress, "0.25", undefined)))
    const seen = await until(async () => {
      const r = await call("GET", `/wrap/orders/${order.id}`, key.apiKey)
      return r.body.status === "deposit_seen" ? r.body : undefined
    }, 30_000, "the ETH deposit seen")
    expect(seen).toMatchObject({ depositTxid, amountReceived: "0.25", confirmations: 1 })
    const done = await settle(key.apiKey, order.id, "released", "ethereum")
    expect(done).toMatchObject({ depositTxid, amountReceived: "0.25", payoutTxid: null })
    expect(done.confirmations).toBeGreaterThanOrEqual(12)
    expect(done.mintTxid).toMatch(/^[0-9a-f]{64}$/)
    expect(await omniBalance(node, payoutAddress, property)).toBe(24_975_000n)
  }, 150_000)

  it("refunds an ETH wrap deposit of the wrong amount to its sender (no refundAddress) or to the refundAddress, less at most the refund's gas", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const ethereum = await node.run(Effect.flatMap(EvmLedgers, (e) => e.get("ethereum")))
    const wei = (address: string) => node.run(ethereum.nativeBalance(address))
    const ether = 10n ** 18n
    // The customer: an account of its own (not the hot wallet), funded by the devnet.
    const customerKey = generatePrivateKey()
    const customer = privateKeyToAccount(customerKey).address
    await node.run(Effect.flatMap(DevnetChains, (c) => c.pay("ethereum", customer, "1", undefined)))
    await mineChain("ethereum")
    const refundTo = freshEvmAddress()
    const cases = [
      { refundAddress: undefined, receiver: customer },
      { refundAddress: refundTo.toLowerCase(), receiver: refundTo }
    ]
    for (const c of cases) {
      const created = await call("POST", "/wrap/orders", key.apiKey, { direction: "wrap", asset: "ETH", amount: "0.25", payoutAddress: randomLedgerKey().address, ...(c.refundAddress === undefined ? {} : { refundAddress: c.refundAddress }) })
      expect(created.status).toBe(201)
      // 0.2 ETH instead of 0.25, sent by the customer's own account.
      const paid = 2n * ether / 10n
      await node.run(ethereum.sendRecorded({ to: created.body.depositAddress, value: paid, signerKey: hexToBytes(customerKey) }, () => Effect.void))
      await mineChain("ethereum")
      const before = await wei(c.receiver)
      const done = await settle(key.apiKey, created.body.id, "refunded", "ethereum")
      expect(done).toMatchObject({ amountReceived: "0.2", mintTxid: null })
      expect(done.refundTxid).toMatch(/^0x[0-9a-f]{64}$/)
      const [leg] = await db.query<{ chain: string; txid: string; sender: string }>(`SELECT chain, txid, sender FROM desk_order_legs WHERE order_id = '${created.body.id}' AND leg = 'refund'`)
      expect(leg).toMatchObject({ chain: "ethereum", txid: done.refundTxid })
      expect(leg!.sender.toLowerCase()).toBe(created.body.depositAddress.toLowerCase())
      // The receiver got the deposit less at most the refund's gas; nothing was granted.
      const gained = (await wei(c.receiver)) - before
      expect(gained).toBeGreaterThan(paid - ether / 1000n)
      expect(gained).toBeLessThan(paid)
      expect(gained + (await wei(created.body.depositAddress))).toBeLessThanOrEqual(paid)
    }
  }, 240_000)

  it("unwraps ETH: wETH in, burned, native ETH paid from the EVM hot wallet, exactly amount − fee in wei", async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const property = await propertyOf("wETH")
    const customer = await deskCustomer(node, db.url, "wETH", 10_000_000n)
    const payoutAddress = freshEvmAddress()
    const created = await call("POST", "/wrap/orders", key.apiKey, { direction: "unwrap", asset: "ETH", amount: "0.1", payoutAddress: payoutAddress.toLowerCase() })
    expect(created.status).toBe(201)
    // A lowercase address is taken and answered checksummed.
    expect(created.body).toMatchObject({ kind: "unwrap", chain: "ethereum", amount: "0.1", fee: "0.0001", payoutAmount: "0.0999", payoutAddress })
    const supplyBefore = await supplyOf(property)
    await customer.send(created.body.depositAddress, 10_000_000n)
    const done = await settle(key.apiKey, created.body.id, "released", "ethereum")
    expect(done.payoutTxid).toMatch(/^0x[0-9a-f]{64}$/)
    expect(supplyBefore - (await supplyOf(property))).toBe(10_000_000n)
    const wei = await node.run(Effect.flatMap(Effect.flatMap(EvmLedgers, (e) => e.get("ethereum")), (l) => l.nativeBalance(payoutAddress)))
    expect(wei).toBe(999n * 10n ** 14n)
    const [leg] = await db.query<{ chain: string; txid: string; nonce: number | null }>(`SELECT chain, txid, nonce FROM desk_order_legs WHERE order_id = '${created.body.id}' AND leg = 'payout'`)
    expect(leg).toMatchObject({ chain: "ethereum", txid: done.payoutTxid })
    expect(leg!.nonce).toEqual(expect.any(Number))
  }, 150_000)

  it("payouts of many orders at once from one hot vault, through two database pools (two nodes), never spend a coin twice", async () => {
    const N = 8
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const orders = await Promise.all(Array.from({ length: N }, async () => {
      const payoutAddress = freshCoinAddress("btc")
      const r = await call("POST", "/wrap/orders", key.apiKey, { direction: "unwrap", asset: "BTC", amount: "0.3", payoutAddress })
      expect(r.status).toBe(201)
      return { id: r.body.id as string, payoutAddress }
    }))
    const vault = await node.run(Effect.map(DeskWallets, (w) => w.wallet("btc", "hot")))
    const coin = await node.run(Effect.map(CoinLedgers, (c) => c.get("btc")))
    // Fewer coins than orders: some payouts must wait for the change of others to confirm.
    for (let i = 0; i < 3; i++) await node.run(Effect.flatMap(DevnetChains, (c) => c.pay("btc", vault.address, "1", undefined)))
    await mineChain("btc")
    const paid = new Map<string, string>()
    for (let round = 0; round < 12 && paid.size < N; round++) {
      const open = orders.filter((o) => !paid.has(o.id))
      // Both "nodes" try every open order at once: one payout per order, and no coin in two.
      const attempt = () => runWithDb(db.url, Effect.forEach(open, (o) => Effect.either(coinPayoutLeg(o.id, "btc", coin, vault, o.payoutAddress, 29_970_000n)), { concurrency: "unbounded" }))
      const [a, b] = await Promise.all([attempt(), attempt()])
      open.forEach((o, i) => {
        const [x, y] = [a[i]!, b[i]!]
        if (Either.isRight(x) && Either.isRight(y)) expect(x.right).toBe(y.right)
        const txid = Either.isRight(x) ? x.right : Either.isRight(y) ? y.right : undefined
        if (txid !== undefined) paid.set(o.id, txid)
      })
      await mineChain("btc")
    }
    expect(paid.size).toBe(N)
    const legs = await db.query<{ order_id: string; txid: string; raw: string }>(`SELECT order_id::text, txid, raw FROM desk_order_legs WHERE leg = 'payout' AND chain = 'btc'`)
    for (const o of orders) expect(legs.filter((l) => l.order_id === o.id).map((l) => l.txid)).toEqual([paid.get(o.id)])
    const spent = legs.flatMap((l) => Transaction.fromHex(l.raw).ins.map((i) => `${Buffer.from(i.hash).reverse().toString("hex")}:${i.index}`))
    expect(new Set(spent).size).toBe(spent.length)
    for (const o of orders) expect(await coinBalance("btc", o.payoutAddress)).toBe(29_970_000n)
  }, 150_000)
})
