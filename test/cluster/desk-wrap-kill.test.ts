// No wrap granted twice and none lost across kill -9. A node process runs the desk on chains that
// outlive it: one litecoind -regtest as the token ledger, another as LTC. ORDERS wrap orders get
// their LTC; the node is killed -9 once the first wLTC grants are recorded, and a second node
// takes over on the same database. Every order ends released, and the ledger itself says each
// order was granted exactly once: one valid grant per order (its memo is the order's reference),
// each payout address holding exactly its payout. Then the same customers unwrap: each sends its
// wLTC to an unwrap order, the node is killed -9 once the first LTC payouts (from the desk's hot
// vault on litecoind) are recorded, and a third node takes over: every unwrap ends released, each
// revoked exactly once (the supply back to 0) and each LTC address paid exactly once.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ECPairFactory } from "ecpair"
import { Effect, Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { p2pkhAddressOfPubkey } from "../../src/chain/address.ts"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import * as DeskWallets from "../../src/desk/wallets/DeskWallets.ts"
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
import { killedLegs, killOnceDeskLegRecorded, waitFor } from "../support/faults.ts"
import { createDeskKey, runWithDb } from "../support/services.ts"

const ORDERS = 6
let ledgerNode: Litecoind
let ltcNode: Litecoind
let db: TestDatabase
let dataDir: string
const nodes: Array<NodeProcess> = []
const ECPair = ECPairFactory(ecc)
// Set by the wrap test, used by the unwrap test after it.
const customers = Array.from({ length: ORDERS }, () => randomLedgerKey())
let vars: Record<string, string> = {}
let deskUrl = ""
let property = 0
let burn = ""


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
    vars = {
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
    deskUrl = `http://127.0.0.1:${deskPort}/api/public/v1`
    // The operator issues wLTC from the desk issuer on the real ledger and names it; one confirmation suffices here.
    const chain = omniChainIndex()
    // The customers get a coin each for the fees of their unwrap deposits later.
    ;({ burn, property } = await readyDeskToken(db, ledger, chain, "wLTC", customers.map((c) => c.address)))
    await db.query(`UPDATE desk_tokens SET required_confirmations = 1 WHERE code = 'wLTC'`)

    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const headers = { "x-api-key": key.apiKey, "content-type": "application/json" }
    const orders: Array<{ id: string; shortRef: string; depositAddress: string; payoutAddress: string }> = []
    for (let i = 0; i < ORDERS; i++) {
      const payoutAddress = customers[i]!.address
      const r = await fetch(`${deskUrl}/wrap/orders`, { method: "POST", headers, body: JSON.stringify({ direction: "wrap", asset: "LTC", amount: "0.1", payoutAddress }) })
      expect(r.status).toBe(201)
      orders.push({ ...(await r.json()) as any, payoutAddress })
    }
    for (const o of orders) await ltcNode.rpc("sendtoaddress", o.depositAddress, 0.1)
    await ltcNode.rpc("generatetoaddress", 1, miner)

    // kill -9 once grants are being recorded, then a second node on the same database and data dir.
    await killOnceDeskLegRecorded(db, nodes[0]!, { where: "leg = 'payout'", label: "the first recorded grant", timeoutMs: 90_000, intervalMs: 20 })
    const legsAtKill = await killedLegs(db)
    nodes.push(await spawnNode(vars))

    await waitFor("every order released", 240_000, async () => {
      await run(ledger.mine(1, burn))
      await ltcNode.rpc("generatetoaddress", 1, miner)
      for (const o of orders) await fetch(`${deskUrl}/wrap/orders/${o.id}`, { headers }).then((r) => r.text()).catch(() => "")
      const [r] = await db.query<{ open: number }>(`SELECT count(*)::int AS open FROM desk_orders WHERE status <> 'released'`)
      return r!.open === 0 ? true : undefined
    }, 700)
    console.log(`desk-wrap-kill: ${legsAtKill} of ${ORDERS} grants were recorded when node 1 was killed`)

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

  it("every unwrap order is burned once and paid LTC once from the hot vault, across another kill -9", async () => {
    const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
    const ledger = makeRpcLedger({ url: urlWithCredentials(ledgerNode), params: ledgerParams, nodeParams: litecoinRegtestParams })
    const ltc = makeRpcLedger({ url: urlWithCredentials(ltcNode), params: litecoinRegtestParams, nodeParams: litecoinRegtestParams })
    const miner = await ltcNode.rpc<string>("getnewaddress", "", "legacy")
    // The operator funds the LTC hot vault: fewer coins than orders, so some payouts wait for change.
    const hot = await runWithDb(db.url, Effect.map(DeskWallets.make, (w) => w.wallet("ltc", "hot").address))
    for (let i = 0; i < 3; i++) await ltcNode.rpc("sendtoaddress", hot, 1)
    await ltcNode.rpc("generatetoaddress", 1, miner)

    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const headers = { "x-api-key": key.apiKey, "content-type": "application/json" }
    const orders: Array<{ id: string; shortRef: string; depositAddress: string; to: string }> = []
    for (let i = 0; i < ORDERS; i++) {
      const to = Either.getOrThrow(p2pkhAddressOfPubkey(ECPair.makeRandom().publicKey, litecoinRegtestParams))
      const r = await fetch(`${deskUrl}/wrap/orders`, { method: "POST", headers, body: JSON.stringify({ direction: "unwrap", asset: "LTC", amount: "0.0999", payoutAddress: to, refundAddress: customers[i]!.address }) })
      expect(r.status).toBe(201)
      orders.push({ ...(await r.json()) as any, to })
    }
    for (const [i, o] of orders.entries()) await run(makeKeyWallet(ledger, customers[i]!.privateKey).omni({ type: "simpleSend", property, amount: 9_990_000n }, o.depositAddress))
    await run(ledger.mine(1, burn))

    const payoutsAtKill = await killOnceDeskLegRecorded(db, nodes[nodes.length - 1]!, {
      where: "leg = 'payout' AND chain = 'ltc'", label: "the first recorded LTC payout", timeoutMs: 120_000, intervalMs: 300, step: () => run(ledger.mine(1, burn))
    })
    nodes.push(await spawnNode(vars))

    const ids = orders.map((o) => `'${o.id}'`).join(", ")
    await waitFor("every unwrap released", 240_000, async () => {
      await run(ledger.mine(1, burn))
      await ltcNode.rpc("generatetoaddress", 1, miner)
      for (const o of orders) await fetch(`${deskUrl}/wrap/orders/${o.id}`, { headers }).then((r) => r.text()).catch(() => "")
      const [r] = await db.query<{ open: number }>(`SELECT count(*)::int AS open FROM desk_orders WHERE id IN (${ids}) AND status <> 'released'`)
      return r!.open === 0 ? true : undefined
    }, 700)
    console.log(`desk-wrap-kill: ${payoutsAtKill} of ${ORDERS} LTC payouts were recorded when the node was killed`)

    const legs = await db.query<{ order_id: string; txid: string }>(`SELECT order_id::text, txid FROM desk_order_legs WHERE leg = 'payout' AND chain = 'ltc'`)
    expect(legs.length).toBe(ORDERS)
    const chain = omniChainIndex()
    await run(ledger.mine(1, burn))
    await run(syncOnce(ledger, chain.consumer))
    for (const o of orders) {
      const revokes = chain.records.filter((r) => r.valid && r.payload?.type === "revoke" && r.payload.memo === o.shortRef)
      expect(revokes.map((r) => r.payload?.type === "revoke" ? r.payload.amount : 0n)).toEqual([9_990_000n])
      // 0.0999 wLTC less 10 bps (rounded up): 0.09980010 LTC, paid once, by the recorded transaction.
      const utxos = await run(ltc.listUnspent([o.to]))
      expect(utxos.map((u) => [u.txid, u.value])).toEqual([[legs.find((l) => l.order_id === o.id)!.txid, 9_980_010n]])
    }
    // Everything granted by the wraps was burned by the unwraps.
    expect(chain.indexer.property(property)?.totalTokens).toBe(0n)
  }, 420_000)
})
