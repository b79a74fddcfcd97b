// A deposit that lands below the height its order was created at (found by `npm run chaos --
// --seed 1 --minutes 1`: a redeem created at 37.0 s, its SUSD sent at once, the ledger reorged by
// 2 blocks at 37.7 s; the send was mined again lower on the new branch and the order stayed
// awaiting_deposit for good). The deposit scan began above the tip height at creation; a reorg
// that shortens the chain puts the next blocks, and the deposit, at or below that height, where
// the scan never looks. The order's deposit address is fresh, so nothing before its creation pays
// it: the scan now starts DEPOSIT_REORG_MARGIN blocks lower. Here: a cash-out created at tip T,
// the ledger reorged to T − 1, the deposit mined at T; the order sees it, burns and pays.
import { Transaction } from "bitcoinjs-lib"
import { Context, Effect, Either, Metric } from "effect"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { EvmLedgers } from "../../src/chain/evm/EvmLedger.ts"
import { UtxoDevnet } from "../../src/chain/ledger/devnet.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { deskCustomer } from "../support/deskCustomer.ts"
import { deskCaller } from "../support/deskHttp.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { mine, newAddress, until } from "../support/omniWorld.ts"
import { buildOmni } from "../../src/chain/txBuilder.ts"
import { devnetFaucet } from "../../src/chain/ledger/devnetFaucet.ts"
import { deskLedgerLegsInvalid } from "../../src/platform/Metrics.ts"
import { createDeskKey, runWithDb } from "../support/services.ts"
import { mineAdversarially } from "../support/adversarialMiner.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import { LEDGER_LEG_FINAL_DEPTH } from "../../src/desk/orders/DeskOrderEntity.ts"
import { findToken } from "../../src/desk/tokens/tokenStore.ts"

let db: TestDatabase
let node: RunningNode
const call = deskCaller(() => node.deskUrl)
const payout = "0x52908400098527886E0F7030069857D2E4169EE7"

const ledgerTx = (txid: string) => node.run(Effect.flatMap(UtxoLedger, (l) => l.getTx(txid)))
const omniTx = (txid: string) => node.run(Effect.flatMap(OmniView, (v) => Effect.zipRight(v.sync, v.tx(txid))))
const omniOf = (f: (v: Context.Tag.Service<typeof OmniView>) => Effect.Effect<bigint | undefined>) => node.run(Effect.flatMap(OmniView, (v) => Effect.zipRight(v.sync, f(v))))
const legTxid = async (orderId: string, leg: string) =>
  (await db.query<{ txid: string }>("SELECT txid FROM desk_order_legs WHERE order_id = $1 AND leg = $2", [orderId, leg]))[0]!.txid

/**
 * Takes off every block from the one holding `txid` up: their transactions go back to the mempool
 * (bitcoind after `invalidateblock`), and empty blocks make the new branch one longer.
 */
const reorgFrom = async (txid: string) => {
  const height = (await ledgerTx(txid)).blockHeight!
  const tip = await node.run(Effect.flatMap(UtxoLedger, (l) => Effect.map(l.tip, (t) => t.height)))
  const depth = tip - height + 1
  await node.run(Effect.flatMap(UtxoDevnet, (d) => d.faults.reorg({ depth, blocks: depth + 1 })))
  return node.run(Effect.flatMap(UtxoDevnet, (d) => d.mempool))
}

beforeAll(async () => {
  db = await createTestDatabase("deskdepositreorg")
  node = await startNode(db.url)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

/** Mines both chains until the cash-out is released (its USDC payout and its burn confirmed). */
const untilReleased = async (orderId: string, apiKey: string) => {
  const hot = await node.run(Effect.flatMap(EvmLedgers, (e) => e.get("base")))
  await until(async () => {
    const r = await call("GET", `/cashout/orders/${orderId}`, apiKey)
    if (r.body.status === "released") return r.body
    await node.run(hot.mine(1))
    await mine(node)
    return undefined
  }, 60_000, "the order released", 300)
}

/** A cash-out of 10 SUSD paid, released (USDC paid, burned), with its deposit, sweep and burn txids. */
const releasedCashout = async () => {
  const key = await createDeskKey(db.url, { scopes: ["cashout"] })
  const customer = await deskCustomer(node, db.url, "SUSD", 1_000_000_000n)
  await mine(node, 3)
  const property = await runWithDb(db.url, Effect.map(findToken("SUSD"), (t) => t!.propertyId!))
  const order = (await call("POST", "/cashout/orders", key.apiKey, { amount: 10, chain: "base", payoutAddress: payout })).body
  const depositTxid = await customer.send(order.depositAddress, 1_000_000_000n)
  await untilReleased(order.id, key.apiKey)
  const sweep = await legTxid(order.id, "sweep")
  const burn = await legTxid(order.id, "burn")
  return { key, customer, property, order, depositTxid, sweep, burn }
}

describe("a desk deposit after a reorg", () => {
  it("is seen when the reorg puts it at or below the height the order was created at", { timeout: 120_000 }, async () => {
    // The ledger's clock is stopped for this case: it checks exact heights around the reorg, and a
    // block the clock mined between the order and the read made 139 against 140 (CI, 2026-11-29).
    // The case mines what it needs; the clock runs again after it, whatever its outcome.
    await node.run(Effect.flatMap(UtxoDevnet, (d) => d.stopClock))
    onTestFinished(() => node.run(Effect.flatMap(UtxoDevnet, (d) => d.startClock(node.config.devnetBlockMs, devnetFaucet(d.ledger).address))))
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    const customer = await deskCustomer(node, db.url, "SUSD", 1_000_000_000n)
    await mine(node, 3)
    const tip = () => node.run(Effect.flatMap(UtxoLedger, (l) => Effect.map(l.tip, (t) => t.height)))
    const created = await call("POST", "/cashout/orders", key.apiKey, { amount: 10, chain: "base", payoutAddress: payout })
    expect(created.status).toBe(201)
    const order = created.body
    const [row] = await db.query<{ h: number }>("SELECT deposit_from_height AS h FROM desk_orders WHERE id = $1", [order.id])
    const createdAt = row!.h
    expect(createdAt).toBe(await tip())
    // Two blocks go, one comes back: the chain is one block shorter than when the order was made.
    await node.run(Effect.flatMap(UtxoDevnet, (d) => d.faults.reorg({ depth: 2, blocks: 1 })))
    expect(await tip()).toBe(createdAt - 1)
    const depositTxid = await customer.send(order.depositAddress, 1_000_000_000n)
    const [height] = await node.run(Effect.flatMap(UtxoLedger, (l) => Effect.map(l.tip, (t) => [t.height])))
    expect(height).toBe(createdAt)

    const hot = await node.run(Effect.flatMap(EvmLedgers, (e) => e.get("base")))
    const done = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
      if (["failed", "refunded", "expired"].includes(r.body.status)) throw new Error(`the order ended ${r.body.status}: ${r.body.failure}`)
      if (r.body.status === "released") return r.body
      await node.run(hot.mine(1))
      await mine(node)
      return undefined
    }, 60_000, "the order released", 300)
    expect(done).toMatchObject({ depositTxid, amountReceived: "10", payoutAmount: "9.99" })
  })
  // Chaos seed 1 (3 minutes): a cash-out's deposit, its sweep and its burn were all in the two
  // blocks a reorg (invalidateblock) took, released and its USDC paid. Back in the mempool nothing
  // at the bitcoin level ordered them (each leg spent only its own fee coin), so the miner could put
  // the burn before the sweep or the sweep before the deposit: that leg is then Omni-invalid for
  // good (its sender short of the token), and no valid revoke was on the final chain. Each leg now
  // also spends an output of what it depends on, so consensus order is Omni order. Here the
  // adversarial miner mines the burn as early as consensus lets it and the deposit as late.
  it("a reorg's miner cannot mine a cash-out's burn or sweep before what it depends on", { timeout: 120_000 }, async () => {
    const { key, property, order, depositTxid, sweep, burn } = await releasedCashout()
    const supply = await omniOf((v) => Effect.map(v.property(property), (p) => p?.totalTokens))

    const mempool = await reorgFrom(depositTxid)
    expect(mempool).toEqual(expect.arrayContaining([depositTxid, sweep, burn]))
    const mined = await mineAdversarially(node, [burn, sweep], [depositTxid])
    await mine(node, LEDGER_LEG_FINAL_DEPTH)

    for (const [what, txid] of [["deposit", depositTxid], ["sweep", sweep], ["burn", burn]] as const) {
      expect({ what, ...(await omniTx(txid)) }).toMatchObject({ what, valid: true })
    }
    expect(mined.indexOf(depositTxid)).toBeLessThan(mined.indexOf(sweep))
    expect(mined.indexOf(sweep)).toBeLessThan(mined.indexOf(burn))
    // Burned once: the supply is what it was when the order read released, the issuer holds none of it.
    expect(await omniOf((v) => Effect.map(v.property(property), (p) => p?.totalTokens))).toBe(supply)
    expect((await call("GET", `/cashout/orders/${order.id}`, key.apiKey)).body.status).toBe("released")
  })

  it("a reorg's miner cannot mine a refund before the deposit it returns", { timeout: 120_000 }, async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    const customer = await deskCustomer(node, db.url, "SUSD", 2_000_000_000n)
    await mine(node, 3)
    const property = await runWithDb(db.url, Effect.map(findToken("SUSD"), (t) => t!.propertyId!))
    const order = (await call("POST", "/cashout/orders", key.apiKey, { amount: 12, chain: "base", payoutAddress: payout, refundAddress: customer.address })).body
    const depositTxid = await customer.send(order.depositAddress, 1_300_000_000n) // not the ordered amount: refunded in full
    await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
      if (r.body.status !== "refunded") await mine(node)
      return r.body.status === "refunded" ? r.body : undefined
    }, 60_000, "the refund", 300)
    const refund = await legTxid(order.id, "refund")

    expect(await reorgFrom(depositTxid)).toEqual(expect.arrayContaining([depositTxid, refund]))
    const mined = await mineAdversarially(node, [refund], [depositTxid])
    await mine(node, LEDGER_LEG_FINAL_DEPTH)

    expect({ ...(await omniTx(depositTxid)) }).toMatchObject({ valid: true })
    expect({ ...(await omniTx(refund)) }).toMatchObject({ valid: true })
    expect(mined.indexOf(depositTxid)).toBeLessThan(mined.indexOf(refund))
    expect(await omniOf((v) => v.balance(customer.address, property))).toBe(2_000_000_000n)
    expect(await omniOf((v) => v.balance(order.depositAddress, property))).toBe(0n)
  })

  // The chaining's other side: a burn spends its sweep's output, so a burn the ledger lost can only
  // come back after its sweep. A reorg that drops both (none back to the mempool) while the order
  // is still paying (its USDC not yet mined) must send the sweep again first, then the burn.
  it("a reorg that drops a paying cash-out's sweep and burn gets both mined again, sweep first, same bytes", { timeout: 120_000 }, async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    const customer = await deskCustomer(node, db.url, "SUSD", 1_000_000_000n)
    await mine(node, 3)
    const order = (await call("POST", "/cashout/orders", key.apiKey, { amount: 10, chain: "base", payoutAddress: payout })).body
    await customer.send(order.depositAddress, 1_000_000_000n)
    // The ledger only: the USDC payout stays unmined, so the order waits in `paying`.
    const burn = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
      const legs = await db.query<{ txid: string }>("SELECT txid FROM desk_order_legs WHERE order_id = $1 AND leg = 'burn'", [order.id])
      if (r.body.status === "paying" && legs[0] !== undefined && (await ledgerTx(legs[0].txid)).confirmations >= 1) return legs[0].txid
      await mine(node)
      return undefined
    }, 60_000, "the burn mined, the order paying", 300)
    const sweep = await legTxid(order.id, "sweep")
    const depth = (await ledgerTx(sweep)).confirmations
    await node.run(Effect.flatMap(UtxoDevnet, (d) => d.faults.reorg({ depth, blocks: depth + 1, orphanedTxs: "drop" })))
    const gone = (txid: string) => node.run(Effect.flatMap(UtxoLedger, (l) => l.getTx(txid).pipe(Effect.as(false), Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(true)))))
    expect([await gone(sweep), await gone(burn)]).toEqual([true, true])

    await untilReleased(order.id, key.apiKey)
    await mine(node, LEDGER_LEG_FINAL_DEPTH)
    const [swept, burned] = [await ledgerTx(sweep), await ledgerTx(burn)]
    expect(swept.blockHeight!).toBeLessThanOrEqual(burned.blockHeight!)
    for (const txid of [sweep, burn]) expect({ ...(await omniTx(txid)) }).toMatchObject({ valid: true })
    expect([await legTxid(order.id, "sweep"), await legTxid(order.id, "burn")]).toEqual([sweep, burn])
  })

  // What chaining cannot order: the customer's own token. A reorg deeper than the deposit's
  // confirmations lets the customer send the same tokens elsewhere first; the deposit is then
  // mined Omni-invalid, and the sweep and burn after it (in a block, deep) moved nothing. A settled
  // order's follow of its ledger legs asks our Omni indexer too: each such leg is reported once
  // (log, metric, `leg_invalid` in the order's trail), and never made again by itself.
  it("a settled cash-out's legs mined Omni-invalid at final depth are reported, not counted as done", { timeout: 120_000 }, async () => {
    const { customer, property, order, depositTxid, sweep, burn } = await releasedCashout()
    const invalidBefore = await node.run(Metric.value(Metric.tagged(deskLedgerLegsInvalid, "leg", "burn")))

    await reorgFrom(depositTxid)
    // The customer's tokens go elsewhere, from a coin the deposit did not spend.
    const spentByDeposit = new Set(Transaction.fromHex((await ledgerTx(depositTxid)).hex).ins.map((i) => `${Buffer.from(i.hash).reverse().toString("hex")}:${i.index}`))
    const elsewhere = await node.run(Effect.gen(function*() {
      const ledger = yield* UtxoLedger
      const coin = (yield* ledger.listUnspent([customer.address])).find((u) => !spentByDeposit.has(`${u.txid}:${u.vout}`))!
      const built = Either.getOrThrow(buildOmni(ledger.params, {
        inputs: [coin], signer: { privateKey: customer.privateKey }, changeAddress: customer.address,
        payload: { type: "simpleSend", property, amount: 1_000_000_000n }, reference: newAddress()
      }))
      return yield* ledger.broadcast(built.hex)
    }))
    const mined = await mineAdversarially(node, [elsewhere], [depositTxid])
    expect(mined.indexOf(elsewhere)).toBeLessThan(mined.indexOf(depositTxid))
    await mine(node, LEDGER_LEG_FINAL_DEPTH)
    for (const txid of [depositTxid, sweep, burn]) expect({ ...(await omniTx(txid)) }).toMatchObject({ valid: false })

    const reported = await until(async () => {
      const rows = await db.query<{ body: { leg: string; txid: string; reason: string; status: string } }>(
        "SELECT body FROM desk_order_events WHERE order_id = $1 AND event = 'leg_invalid' ORDER BY id", [order.id])
      return rows.length === 2 ? rows.map((r) => r.body) : undefined
    }, 60_000, "both legs reported invalid", 500)
    expect(reported).toEqual(expect.arrayContaining([
      expect.objectContaining({ leg: "sweep", txid: sweep, status: "released", reason: expect.stringContaining("needs 1000000000") }),
      expect.objectContaining({ leg: "burn", txid: burn, status: "released", reason: expect.stringContaining("cannot revoke 1000000000") })
    ]))
    const invalidAfter = await node.run(Metric.value(Metric.tagged(deskLedgerLegsInvalid, "leg", "burn")))
    expect(invalidAfter.count).toBe(invalidBefore.count + 1)
    // Nothing made again: the same two legs, and no new transaction from the deposit address or the issuer.
    expect((await db.query<{ leg: string }>("SELECT leg FROM desk_order_legs WHERE order_id = $1 AND chain = 'ledger' ORDER BY leg", [order.id])).map((r) => r.leg)).toEqual(["burn", "sweep"])
    expect(await node.run(Effect.flatMap(UtxoDevnet, (d) => d.mempool))).toEqual([])
  })

  // Chaos seed 1 (3 minutes, quiet box): a refund was in the blocks a 2-block reorg took after its
  // first confirmation; the order read `refunded` and nothing sent the refund again, so it never
  // reached the chain. A settled order now follows its ledger legs to LEDGER_LEG_FINAL_DEPTH and
  // sends a lost one's stored bytes again. Here the reorg drops the refund's block and its
  // transactions (none back to the mempool): the same refund, same txid, is mined again.
  it("a refund a reorg takes after the order read refunded is sent again, same bytes", { timeout: 120_000 }, async () => {
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    const customer = await deskCustomer(node, db.url, "SUSD", 2_000_000_000n)
    await mine(node, 3)
    const order = (await call("POST", "/cashout/orders", key.apiKey, { amount: 12, chain: "base", payoutAddress: payout, refundAddress: customer.address })).body
    await customer.send(order.depositAddress, 1_300_000_000n) // not the ordered amount: refunded in full
    const refunded = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
      if (r.body.status !== "refunded") await mine(node)
      return r.body.status === "refunded" ? r.body : undefined
    }, 60_000, "the refund", 300)
    const refundTxid = refunded.refundTxid as string
    const confirmations = () => node.run(Effect.flatMap(UtxoLedger, (l) => l.getTx(refundTxid).pipe(
      Effect.map((tx) => tx.confirmations),
      Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(-1)))))
    const depth = await confirmations()
    expect(depth).toBeGreaterThanOrEqual(1)
    await node.run(Effect.flatMap(UtxoDevnet, (d) => d.faults.reorg({ depth, blocks: depth + 1, orphanedTxs: "drop" })))
    expect(await confirmations()).toBe(-1) // gone from the chain and the mempool
    const back = await until(async () => {
      const n = await confirmations()
      if (n < 1) await mine(node)
      return n >= 1 ? n : undefined
    }, 60_000, "the refund mined again", 500)
    expect(back).toBeGreaterThanOrEqual(1)
    const again = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
    expect(again.body).toMatchObject({ status: "refunded", refundTxid })
  })
})
