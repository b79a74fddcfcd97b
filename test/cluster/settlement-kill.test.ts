// No leg paid twice across kill -9. A node process settles trades on a chain that outlives it
// (litecoind -regtest over JSON-RPC): 40 trades, two legs each, followed by their Settlement
// entities; the node is killed -9 while it is signing, a second node takes over on the same
// database and data dir, and blocks keep coming. Every leg ends final with one transaction, and
// the chain itself says nothing was paid twice: exactly one valid Omni send per leg left each
// delegated address, and each receiver holds exactly the sum of its legs. Also with two processes
// per node (SHARDLINE_PROCESSES=2), one of node 1's processes killed -9 instead of the node.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Authorization, Grant } from "../../schemas/exchange/authorization.ts"
import { Follow, Settlement } from "../../schemas/exchange/settlement.ts"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { newGrantId } from "../../src/exchange/authorization/AuthorizationEntity.ts"
import { entityIdOf } from "../../src/exchange/authorization/policy.ts"
import * as ApiKeys from "../../src/exchange/auth/ApiKeys.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { clusterClientLayer } from "../support/clusterClient.ts"
import { readyOmniIssuer, waitFor } from "../support/faults.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { testMasterKey } from "../support/node.ts"
import { startLitecoind, type Litecoind, urlWithCredentials } from "../support/litecoind.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { variantsOfTier } from "../support/tier.ts"

const TRADES = 40
const BASE = 1_000n
const QUOTE = 2_000n
let litecoind: Litecoind
let db: TestDatabase
let dataDir: string
const nodes: Array<NodeProcess> = []
let client: ManagedRuntime.ManagedRuntime<Layer.Layer.Success<ReturnType<typeof clientLayer>>, never> | undefined

const clientLayer = (databaseUrl: string) => clusterClientLayer(databaseUrl, "shardline:settlement-kill-test")

/**
 * One process per node, node 1 killed; or two per node (SHARDLINE_PROCESSES, cluster/Primary.ts),
 * one of node 1's processes killed: its primary starts it again while node 2 joins.
 */
const variants = variantsOfTier({
  core: [{ processes: 1, victim: "node" }],
  long: [{ processes: 2, victim: "process" }]
} as const)

describe.each(variants)("settlement across kill -9 ($processes process(es) per node, a $victim killed)", ({ processes, victim }) => {
  beforeAll(async () => {
    nodes.length = 0
    client = undefined
    litecoind = await startLitecoind()
    db = await createTestDatabase("settlekill")
    dataDir = mkdtempSync(join(tmpdir(), "sl-settle-"))
  }, 60_000)
  afterAll(async () => {
    await client?.dispose()
    for (const n of nodes) await n.dispose()
    await litecoind?.stop()
    await db?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("every leg is paid exactly once and reaches its final depth on the node that takes over", async () => {
    const url = urlWithCredentials(litecoind)
    const vars = {
      SHARDLINE_DATABASE_URL: db.url,
      SHARDLINE_MASTER_KEY: testMasterKey,
      SHARDLINE_DATA_DIR: dataDir, // the key epoch file must survive the kill
      SHARDLINE_LEDGER_RPC_URL: url,
      SHARDLINE_LEDGER_BLOCK_MS: "700",
      SHARDLINE_SETTLEMENT_FINAL_DEPTH: "2",
      SHARDLINE_MESSAGE_POLL_MS: "200",
      SHARDLINE_DEVNET_BLOCK_MS: "0",
      SHARDLINE_PROCESSES: String(processes)
    }
    nodes.push(await spawnNode(vars, { startTimeoutMs: 300_000 * processes }))
    client = ManagedRuntime.make(clientLayer(db.url))
    // The operator funds the fee sponsor; an issuer makes the two properties of the market.
    const { ledger, run, burn, chain, issuerWallet, issue } = await readyOmniIssuer(url, db, 1)
    const [tokA, tokB] = [await issue("Kill A"), await issue("Kill B")]

    // Two users with addresses and grants (through cluster storage, as the CLI sends them).
    const [sellerOwn, buyerOwn] = [randomLedgerKey().address, randomLedgerKey().address]
    const users = await client.runPromise(Effect.gen(function*() {
      const keys = yield* ApiKeys.ApiKeys
      const s = yield* keys.create({ scopes: ["read", "trade"], addresses: [sellerOwn] })
      const b = yield* keys.create({ scopes: ["read", "trade"], addresses: [buyerOwn] })
      const authorizations = yield* Authorization.client
      for (const [userId, asset] of [[s.userId, "KILLA"], [b.userId, "KILLB"]] as const) {
        yield* authorizations(entityIdOf(userId, asset)).Grant(new Grant({ grantId: newGrantId(), cap: "1000000", expiresAtMs: Date.now() + 3_600_000 }), { discard: true })
      }
      return { seller: s.userId, buyer: b.userId }
    }))
    const grantOf = (userId: number) => waitFor(`user ${userId}'s grant`, 60_000, async () =>
      (await db.query<{ grant_id: string; delegated_address: string }>(`SELECT grant_id, delegated_address FROM authorizations WHERE user_id = $1`, [userId]))[0])
    const [seller, buyer] = [await grantOf(users.seller), await grantOf(users.buyer)]
    await run(issuerWallet.omni({ type: "grant", property: tokA, amount: 10n ** 9n, memo: "" }, seller.delegated_address))
    await run(ledger.mine(1, burn))
    await run(issuerWallet.omni({ type: "grant", property: tokB, amount: 10n ** 9n, memo: "" }, buyer.delegated_address))
    await run(ledger.mine(1, burn))

    // The trades and their recorded legs, as a Market writes them; then a Follow each.
    await db.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ('KILLA', $1, 8), ('KILLB', $2, 8)`, [tokA, tokB])
    await db.query(`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
      VALUES (1, 'KILLAKILLB', 'KILLA', 'KILLB', '0.01', '0.01', '0.01', '1000000', '0.01', '9000000', '0', '0')`)
    await db.query(`INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id, buyer_user, seller_user, buyer_is_maker, time_ms)
      SELECT n, 1, 1, 1, 1, 1, 2, $1, $2, false, 0 FROM generate_series(1, $3::int) AS n`, [users.buyer, users.seller, TRADES])
    await db.query(`INSERT INTO settlement_legs (trade_id, leg, asset, property_id, amount, grant_id, from_address, to_address)
      SELECT n, 'base', 'KILLA', $1::bigint, $2::numeric, $3, $4, $5 FROM generate_series(1, $11::int) AS n
      UNION ALL SELECT n, 'quote', 'KILLB', $6::bigint, $7::numeric, $8, $9, $10 FROM generate_series(1, $11::int) AS n`,
    [tokA, BASE.toString(), seller.grant_id, seller.delegated_address, buyerOwn, tokB, QUOTE.toString(), buyer.grant_id, buyer.delegated_address, sellerOwn, TRADES])
    await client.runPromise(Effect.gen(function*() {
      const settlements = yield* Settlement.client
      yield* Effect.forEach(Array.from({ length: TRADES }, (_, i) => String(i + 1)),
        (tradeId) => settlements(tradeId).Follow(new Follow({ tradeId }), { discard: true }), { concurrency: 8, discard: true })
    }))

    // kill -9 once it is signing, then a second node on the same database and data dir.
    await waitFor("the first signed legs", 60_000, async () => {
      const [r] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM settlement_legs WHERE tx_hex IS NOT NULL`)
      return r!.n > 0 ? true : undefined
    }, 20)
    if (victim === "node") {
      nodes[0]!.child.kill("SIGKILL")
      await nodes[0]!.exited
    } else {
      process.kill(nodes[0]!.runnerPid(nodes[0]!.runnerNames[0]!)!, "SIGKILL")
    }
    const [atKill] = await db.query<{ signed: number }>(`SELECT count(*)::int AS signed FROM settlement_legs WHERE tx_hex IS NOT NULL`)
    nodes.push(await spawnNode(vars, { startTimeoutMs: 300_000 * processes }))

    // Blocks keep coming until every leg is final.
    await waitFor("every leg final", 180_000, async () => {
      await run(ledger.mine(1, burn))
      const [r] = await db.query<{ open: number }>(`SELECT count(*)::int AS open FROM settlement_legs WHERE status <> 'final'`)
      return r!.open === 0 ? true : undefined
    }, 700)
    console.log(`settlement-kill: ${atKill!.signed} of ${2 * TRADES} legs were signed when node 1's ${victim} was killed`)
    // A killed process is started again by its node's primary.
    if (victim === "process") expect(nodes[0]!.isRunning()).toBe(true)

    const legs = await db.query<{ txid: string; from_address: string; leg: string }>(`SELECT txid, from_address, leg FROM settlement_legs`)
    expect(new Set(legs.map((l) => l.txid)).size).toBe(2 * TRADES)
    await run(syncOnce(ledger, chain.consumer))
    const sendsFrom = (address: string) => chain.records.filter((r) => r.valid && r.sender === address && r.payload?.type === "simpleSend")
    // The chain's own account: one valid send per leg from each delegated address, each a stored leg.
    expect(sendsFrom(seller.delegated_address).map((r) => r.txid).sort()).toEqual(legs.filter((l) => l.leg === "base").map((l) => l.txid).sort())
    expect(sendsFrom(buyer.delegated_address).map((r) => r.txid).sort()).toEqual(legs.filter((l) => l.leg === "quote").map((l) => l.txid).sort())
    expect(chain.indexer.balance(buyerOwn, tokA)).toBe(BigInt(TRADES) * BASE)
    expect(chain.indexer.balance(sellerOwn, tokB)).toBe(BigInt(TRADES) * QUOTE)
  }, processes === 1 ? 300_000 : 1_500_000)
})
