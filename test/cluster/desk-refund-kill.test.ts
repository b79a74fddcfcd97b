// Mint refunds across a kill -9, against anvil as base (it outlives the node): ORDERS mint orders
// each get a stablecoin deposit of the wrong amount; the node tops each order's address up with
// gas and sends the deposit back from it. It is killed once the first gas top-up is recorded
// (anvil mines only when the test says, so legs are in flight), and a second node on the same
// database takes over. Every order ends refunded, each refund address holds exactly its deposit,
// each order address sent exactly one transfer (its recorded refund leg), and the hot wallet sent
// exactly one top-up per order: recorded legs were only ever sent again, never made twice.
import { Effect, Redacted } from "effect"
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { deployDevnetTokens, devnetTokenAddress } from "../../src/chain/evm/devnetTokens.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { freePort } from "../../harness/ports.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { anvilDevKey, startAnvil, type Anvil } from "../support/anvil.ts"
import { testMasterKey } from "../support/node.ts"
import { killedLegs, killOnceDeskLegRecorded, waitFor } from "../support/faults.ts"
import { createDeskKey } from "../support/services.ts"

const ORDERS = 5
let anvil: Anvil
let db: TestDatabase
const nodes: Array<NodeProcess> = []

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  db = await createTestDatabase("deskrefundkill")
}, 60_000)
afterAll(async () => {
  for (const n of nodes) await n.dispose()
  await anvil?.stop()
  await db?.drop()
})

const anvilRpc = (method: string, params: Array<unknown>) =>
  fetch(anvil.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })
    .then((r) => r.json() as Promise<{ result: unknown }>)

describe("desk mint refunds across kill -9", () => {
  it("every wrong deposit goes back exactly once, from its order's address, after one gas top-up each", async () => {
    const deskPort = await freePort()
    const vars = {
      SHARDLINE_DATABASE_URL: db.url,
      SHARDLINE_MASTER_KEY: testMasterKey,
      SHARDLINE_EVM_RPC_URLS: `base=${anvil.url}`,
      SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey,
      SHARDLINE_MESSAGE_POLL_MS: "200",
      SHARDLINE_DEVNET_BLOCK_MS: "0",
      SHARDLINE_DESK_HTTP_PORT: String(deskPort)
    }
    const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
    const base = await run(makeViemLedger({ chain: "base", rpcUrl: anvil.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" }))
    await run(deployDevnetTokens(base))
    const usdc = devnetTokenAddress(base.hotWallet, "USDC")

    nodes.push(await spawnNode(vars))
    const deskUrl = `http://127.0.0.1:${deskPort}/api/public/v1`
    const key = await createDeskKey(db.url, { scopes: ["stables"] })
    const headers = { "x-api-key": key.apiKey, "content-type": "application/json" }
    const orders: Array<{ id: string; depositAddress: string; refundAddress: string; deposit: bigint }> = []
    for (let i = 0; i < ORDERS; i++) {
      const refundAddress = privateKeyToAccount(generatePrivateKey()).address
      const r = await fetch(`${deskUrl}/stables/orders`, {
        method: "POST", headers,
        body: JSON.stringify({ asset: "XUSD", direction: "mint", chain: "base", token: "USDC", recipient: randomLedgerKey().address, refundAddress, amount: 30 })
      })
      expect(r.status).toBe(201)
      orders.push({ ...(await r.json()) as any, refundAddress, deposit: 31_000_000n + BigInt(i) })
    }
    // From here anvil mines only when told: the node's legs sit in its mempool meanwhile.
    await anvilRpc("evm_setAutomine", [false])
    for (const o of orders) await run(base.erc20Transfer(usdc, o.depositAddress, o.deposit))
    const nonceBefore = await run(Effect.promise(() => anvilRpc("eth_getTransactionCount", [base.hotWallet, "pending"]))).then((r) => Number(r.result))

    await killOnceDeskLegRecorded(db, nodes[0]!, { where: "leg = 'refund_gas'", label: "the first recorded gas top-up", timeoutMs: 90_000, intervalMs: 300, step: () => run(base.mine(1)) })
    const legsAtKill = await killedLegs(db)
    nodes.push(await spawnNode(vars))

    await waitFor("every order refunded", 120_000, async () => {
      await run(base.mine(1))
      for (const o of orders) await fetch(`${deskUrl}/cashout/orders/${o.id}`, { headers }).then((r) => r.text()).catch(() => "")
      const [r] = await db.query<{ open: number }>(`SELECT count(*)::int AS open FROM desk_orders WHERE status <> 'refunded'`)
      return r!.open === 0 ? true : undefined
    }, 500).catch(async (e) => {
      console.log(JSON.stringify(await db.query(`SELECT short_ref, status, failure FROM desk_orders`)))
      console.log(JSON.stringify(await db.query(`SELECT order_id, leg, txid, nonce, sender FROM desk_order_legs ORDER BY recorded_at`)))
      console.log(nodes[1]!.output().split("\n").filter((l) => /order|leg|refund|WARN|ERROR/i.test(l)).slice(-40).join("\n"))
      throw e
    })
    console.log(`desk-refund-kill: ${legsAtKill} of ${2 * ORDERS} legs were recorded when node 1 was killed`)
    await anvilRpc("evm_setAutomine", [true])

    const legs = await db.query<{ order_id: string; leg: string; txid: string; nonce: number }>(`SELECT order_id::text, leg, txid, nonce FROM desk_order_legs`)
    expect(legs.length).toBe(2 * ORDERS)
    const head = await run(base.blockNumber)
    for (const o of orders) {
      const mine = legs.filter((l) => l.order_id === o.id)
      expect(mine.map((l) => l.leg).sort()).toEqual(["refund", "refund_gas"])
      // Exactly the deposit back, once, in the recorded refund leg.
      expect(await run(base.tokenBalance(usdc, o.refundAddress))).toBe(o.deposit)
      expect(await run(base.tokenBalance(usdc, o.depositAddress))).toBe(0n)
      const out = await run(base.transfers(usdc, 0n, head, { from: [o.depositAddress] }))
      expect(out.logs.map((l) => l.txHash)).toEqual(mine.filter((l) => l.leg === "refund").map((l) => l.txid))
      expect(mine.find((l) => l.leg === "refund")!.nonce).toBe(0)
      expect(await run(base.confirmations(mine.find((l) => l.leg === "refund_gas")!.txid))).toBeGreaterThan(0)
    }
    // The hot wallet sent one gas top-up per order after the deposits, nothing more.
    const nonceAfter = Number((await anvilRpc("eth_getTransactionCount", [base.hotWallet, "latest"])).result)
    expect(nonceAfter - nonceBefore).toBe(ORDERS)
  }, 300_000)
})
