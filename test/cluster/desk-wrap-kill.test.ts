// No wrap granted twice and none lost across kill -9. A node process runs the desk on chains that
// outlive it: one litecoind -regtest as the token ledger, another as LTC. ORDERS wrap orders get
// their LTC; the node is killed -9 once the first wLTC grants are recorded, and a second node
// takes over on the same database. Every order ends released, and the ledger itself says each
// order was granted exactly once: one valid grant per order (its memo is the order's reference),
// each payout address holding exactly its payout.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { makeRpcLedger } from "../../src/chain/ledger/rpcLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { freePort } from "../../harness/ports.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { urlWithCredentials, startLitecoind, type Litecoind } from "../support/litecoind.ts"
import { testMasterKey } from "../support/node.ts"
import { omniChainIndex } from "../support/omniChainIndex.ts"
import { readyDeskToken } from "../support/deskRealLedger.ts"
import { waitFor } from "../support/waitFor.ts"
import { createDeskKey } from "../support/services.ts"

const ORDERS = 6
let ledgerNode: Litecoind
let ltcNode: Litecoind
let db: TestDatabase
let dataDir: string
const nodes: Array<NodeProcess> = []


beforeAll(async () => {
  ledgerNode = await startLitecoind()
  ltcNode = await startLitecoind()
  await ltcNode.rpc("createwallet", "w")
  db = await createTestDatabase("wrapkill")
  dataDir = mkdtempSync(join(tmpdir(), "sl-wrapkill-"))
}, 60_000)
afterAll(async () => {
  for (const n of nodes) await n.dispose()
  await ltcNode?.stop()
  await ledgerNode?.stop()
  await db?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("desk wrap across kill -9", () => {
  it("every wrap order is granted exactly once, on the node that takes over", async () => {
    const deskPort = await freePort()
    const vars = {
      SHARDLINE_DATABASE_URL: db.url,
      SHARDLINE_MASTER_KEY: testMasterKey,
      SHARDLINE_DATA_DIR: dataDir,
      SHARDLINE_LEDGER_RPC_URL: urlWithCredentials(ledgerNode),
      SHARDLINE_LTC_RPC_URL: urlWithCredentials(ltcNode),
      SHARDLINE_LEDGER_BLOCK_MS: "700",
      SHARDLINE_MESSAGE_POLL_MS: "200",
      SHARDLINE_DEVNET_BLOCK_MS: "0",
      SHARDLINE_DESK_HTTP_PORT: String(deskPort)
    }
    const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
    const ledger = makeRpcLedger({ url: urlWithCredentials(ledgerNode), params: ledgerParams, nodeParams: litecoinRegtestParams })
    const miner = await ltcNode.rpc<string>("getnewaddress", "", "legacy")
    await ltcNode.rpc("generatetoaddress", 101, miner)

    nodes.push(await spawnNode(vars))
    const deskUrl = `http://127.0.0.1:${deskPort}/api/public/v1`
    // The operator issues wLTC from the desk issuer on the real ledger and names it; one confirmation suffices here.
    const chain = omniChainIndex()
    const { burn, property } = await readyDeskToken(db, ledger, chain, "wLTC")
    await db.query(`UPDATE desk_tokens SET required_confirmations = 1 WHERE code = 'wLTC'`)

    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const headers = { "x-api-key": key.apiKey, "content-type": "application/json" }
    const orders: Array<{ id: string; shortRef: string; depositAddress: string; payoutAddress: string }> = []
    for (let i = 0; i < ORDERS; i++) {
      const payoutAddress = randomLedgerKey().address
      const r = await fetch(`${deskUrl}/wrap/orders`, { method: "POST", headers, body: JSON.stringify({ direction: "wrap", asset: "LTC", amount: "0.1", payoutAddress }) })
      expect(r.status).toBe(201)
      orders.push({ ...(await r.json()) as any, payoutAddress })
    }
    for (const o of orders) await ltcNode.rpc("sendtoaddress", o.depositAddress, 0.1)
    await ltcNode.rpc("generatetoaddress", 1, miner)

    // kill -9 once grants are being recorded, then a second node on the same database and data dir.
    await waitFor("the first recorded grant", 90_000, async () => {
      const [r] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM desk_order_legs WHERE leg = 'payout'`)
      return r!.n > 0 ? true : undefined
    }, 20)
    nodes[0]!.child.kill("SIGKILL")
    await nodes[0]!.exited
    const [atKill] = await db.query<{ legs: number }>(`SELECT count(*)::int AS legs FROM desk_order_legs`)
    nodes.push(await spawnNode(vars))

    await waitFor("every order released", 240_000, async () => {
      await run(ledger.mine(1, burn))
      await ltcNode.rpc("generatetoaddress", 1, miner)
      for (const o of orders) await fetch(`${deskUrl}/wrap/orders/${o.id}`, { headers }).then((r) => r.text()).catch(() => "")
      const [r] = await db.query<{ open: number }>(`SELECT count(*)::int AS open FROM desk_orders WHERE status <> 'released'`)
      return r!.open === 0 ? true : undefined
    }, 700)
    console.log(`desk-wrap-kill: ${atKill!.legs} of ${ORDERS} grants were recorded when node 1 was killed`)

    const legs = await db.query<{ order_id: string; txid: string }>(`SELECT order_id::text, txid FROM desk_order_legs WHERE leg = 'payout'`)
    expect(legs.length).toBe(ORDERS)
    await run(ledger.mine(1, burn))
    await run(syncOnce(ledger, chain.consumer))
    for (const o of orders) {
      const grants = chain.records.filter((r) => r.valid && r.payload?.type === "grant" && r.payload.memo === o.shortRef)
      expect(grants.map((g) => g.txid)).toEqual(legs.filter((l) => l.order_id === o.id).map((l) => l.txid))
      expect(grants[0]!.reference).toBe(o.payoutAddress)
      // 0.1 LTC less 10 bps: 0.0999 wLTC, exactly once.
      expect(chain.indexer.balance(o.payoutAddress, property)).toBe(9_990_000n)
    }
  }, 420_000)
})
