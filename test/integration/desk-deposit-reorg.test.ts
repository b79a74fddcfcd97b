// A deposit that lands below the height its order was created at (found by `npm run chaos --
// --seed 1 --minutes 1`: a redeem created at 37.0 s, its SUSD sent at once, the ledger reorged by
// 2 blocks at 37.7 s; the send was mined again lower on the new branch and the order stayed
// awaiting_deposit for good). The deposit scan began above the tip height at creation; a reorg
// that shortens the chain puts the next blocks, and the deposit, at or below that height, where
// the scan never looks. The order's deposit address is fresh, so nothing before its creation pays
// it: the scan now starts DEPOSIT_REORG_MARGIN blocks lower. Here: a cash-out created at tip T,
// the ledger reorged to T − 1, the deposit mined at T; the order sees it, burns and pays.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EvmLedgers } from "../../src/chain/evm/EvmLedger.ts"
import { UtxoDevnet } from "../../src/chain/ledger/devnet.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { deskCustomer } from "../support/deskCustomer.ts"
import { deskCaller } from "../support/deskHttp.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { mine, until } from "../support/omniWorld.ts"
import { createDeskKey } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
const call = deskCaller(() => node.deskUrl)
const payout = "0x52908400098527886E0F7030069857D2E4169EE7"

beforeAll(async () => {
  db = await createTestDatabase("deskdepositreorg")
  node = await startNode(db.url)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("a desk deposit after a reorg", () => {
  it("is seen when the reorg puts it at or below the height the order was created at", { timeout: 120_000 }, async () => {
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
})
