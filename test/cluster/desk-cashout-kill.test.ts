// No cash-out paid twice and none lost across kill -9. A node process runs the desk on chains
// that outlive it (litecoind -regtest as the token ledger, anvil as base): ORDERS cash-out orders
// are made, their deposits sent and confirmed; the node is killed -9 once the first legs are
// recorded (sweeps, burns, USDC payouts), and a second node takes over on the same database.
// Every order ends released, and the chains themselves say each order was swept, burned and
// paid exactly once: one Omni send from each deposit address, one revoke per order, and each
// order's own payout address holds exactly its payout in USDC, from one transfer.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Redacted } from "effect"
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { makeRpcLedger } from "../../src/chain/ledger/rpcLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import { deployDevnetTokens, devnetTokenAddress } from "../../src/chain/evm/devnetTokens.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { freePort } from "../../harness/ports.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { anvilDevKey, startAnvil, type Anvil } from "../support/anvil.ts"
import { urlWithCredentials, startLitecoind, type Litecoind } from "../support/litecoind.ts"
import { testMasterKey } from "../support/node.ts"
import { omniChainIndex } from "../support/omniChainIndex.ts"
import { readyDeskToken } from "../support/deskRealLedger.ts"
import { killedLegs, killOnceDeskLegRecorded, waitFor } from "../support/faults.ts"
import { createDeskKey } from "../support/services.ts"

const ORDERS = 6
const AMOUNT = 1_000_000_000n // 10 SUSD, the minimum
let litecoind: Litecoind
let anvil: Anvil
let db: TestDatabase
let dataDir: string
const nodes: Array<NodeProcess> = []


beforeAll(async () => {
  litecoind = await startLitecoind()
  anvil = await startAnvil({ chainId: 8453 })
  db = await createTestDatabase("deskkill")
  dataDir = mkdtempSync(join(tmpdir(), "sl-deskkill-"))
}, 60_000)
afterAll(async () => {
  for (const n of nodes) await n.dispose()
  await anvil?.stop()
  await litecoind?.stop()
  await db?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("desk cash-out across kill -9", () => {
  it("every order is swept, burned and paid exactly once, on the node that takes over", async () => {
    const url = new URL(urlWithCredentials(litecoind))
    const deskPort = await freePort()
    const vars = {
      SHARDLINE_DATABASE_URL: db.url,
      SHARDLINE_MASTER_KEY: testMasterKey,
      SHARDLINE_DATA_DIR: dataDir,
      SHARDLINE_LEDGER_RPC_URL: url.toString(),
      SHARDLINE_LEDGER_BLOCK_MS: "700",
      SHARDLINE_EVM_RPC_URLS: `base=${anvil.url}`,
      SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey,
      SHARDLINE_MESSAGE_POLL_MS: "200",
      SHARDLINE_DEVNET_BLOCK_MS: "0",
      SHARDLINE_DESK_HTTP_PORT: String(deskPort)
    }
    const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
    const ledger = makeRpcLedger({ url: url.toString(), params: ledgerParams, nodeParams: litecoinRegtestParams })
    // USDC where the devnet puts it: the hot wallet's first contract, deployed before the node sends anything.
    const base = await run(makeViemLedger({ chain: "base", rpcUrl: anvil.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" }))
    await run(deployDevnetTokens(base))
    const usdc = devnetTokenAddress(base.hotWallet, "USDC")

    nodes.push(await spawnNode(vars))
    const deskUrl = `http://127.0.0.1:${deskPort}/api/public/v1`
    // The operator issues SUSD from the desk issuer on the real ledger and names it (desk tokens set).
    const customer = randomLedgerKey()
    const chain = omniChainIndex()
    const { burn, issuer, issuerWallet, property } = await readyDeskToken(db, ledger, chain, "SUSD", [customer.address])
    await run(issuerWallet.omni({ type: "grant", property, amount: AMOUNT * BigInt(ORDERS), memo: "" }, customer.address))
    await run(ledger.mine(1, burn))

    // ORDERS orders, each paying out to its own fresh address; the customer sends each deposit.
    const key = await createDeskKey(db.url, { scopes: ["cashout"] })
    const headers = { "x-api-key": key.apiKey, "content-type": "application/json" }
    const orders: Array<{ id: string; depositAddress: string; payoutAddress: string; payoutAmount: string }> = []
    for (let i = 0; i < ORDERS; i++) {
      const payoutAddress = privateKeyToAccount(generatePrivateKey()).address
      const r = await fetch(`${deskUrl}/cashout/orders`, { method: "POST", headers, body: JSON.stringify({ amount: 10, chain: "base", payoutAddress }) })
      expect(r.status).toBe(201)
      orders.push({ ...(await r.json()) as any, payoutAddress })
    }
    const customerWallet = makeKeyWallet(ledger, customer.privateKey)
    // One per block: the customer's wallet spends confirmed coins only.
    for (const o of orders) {
      await run(customerWallet.omni({ type: "simpleSend", property, amount: AMOUNT }, o.depositAddress))
      await run(ledger.mine(1, burn))
    }

    // kill -9 once USDC payouts are being recorded and sent, then a second node on the same database and data dir.
    await killOnceDeskLegRecorded(db, nodes[0]!, { where: "leg = 'payout'", label: "the first recorded payout", timeoutMs: 90_000, intervalMs: 20, step: () => run(ledger.mine(1, burn)) })
    const legsAtKill = await killedLegs(db)
    nodes.push(await spawnNode(vars))

    // Blocks keep coming (and polls advance the orders) until every order is released.
    await waitFor("every order released", 120_000, async () => {
      await run(ledger.mine(1, burn))
      for (const o of orders) await fetch(`${deskUrl}/cashout/orders/${o.id}`, { headers }).then((r) => r.text()).catch(() => "")
      const [r] = await db.query<{ open: number }>(`SELECT count(*)::int AS open FROM desk_orders WHERE status <> 'released'`)
      return r!.open === 0 ? true : undefined
    }, 700).catch(async (e) => {
      // What each order and leg was left at, and the node's last words, to say why.
      console.log(JSON.stringify(await db.query(`SELECT short_ref, status, failure FROM desk_orders`)))
      console.log(JSON.stringify(await db.query(`SELECT order_id, leg, txid, nonce FROM desk_order_legs ORDER BY recorded_at`)))
      console.log(nodes[1]!.output().split("\n").filter((l) => /order|leg|payout|WARN|ERROR/i.test(l)).slice(-40).join("\n"))
      throw e
    })
    console.log(`desk-cashout-kill: ${legsAtKill} of ${3 * ORDERS} legs were recorded when node 1 was killed`)

    const legs = await db.query<{ order_id: string; leg: string; txid: string }>(`SELECT order_id::text, leg, txid FROM desk_order_legs`)
    expect(legs.length).toBe(3 * ORDERS)
    await run(ledger.mine(1, burn))
    await run(syncOnce(ledger, chain.consumer))
    const valid = chain.records.filter((r) => r.valid)
    for (const o of orders) {
      const mine = legs.filter((l) => l.order_id === o.id)
      // One valid send out of the deposit address (the sweep), one revoke of the amount (the burn).
      expect(valid.filter((r) => r.sender === o.depositAddress && r.payload?.type === "simpleSend").map((r) => r.txid)).toEqual(mine.filter((l) => l.leg === "sweep").map((l) => l.txid))
      expect(valid.filter((r) => r.payload?.type === "revoke" && r.payload.memo === (o as any).shortRef).map((r) => r.txid)).toEqual(mine.filter((l) => l.leg === "burn").map((l) => l.txid))
      // Exactly the payout, once.
      expect(await run(base.tokenBalance(usdc, o.payoutAddress))).toBe(9_990_000n)
      const transfers = await run(base.transfers(usdc, 0n, await run(base.blockNumber), { to: [o.payoutAddress] }))
      expect(transfers.logs.map((l) => l.txHash)).toEqual(mine.filter((l) => l.leg === "payout").map((l) => l.txid))
    }
    expect(chain.indexer.balance(issuer.address, property)).toBe(0n)
  }, 420_000)
})
