// The desk's EVM side on anvil (a real JSON-RPC node):
// - cross-node nonce safety: two EvmLedger instances with the same hot wallet, each over its own
//   Postgres pool (two nodes), record and send USDC payouts at once; every payout is mined with
//   the bytes first recorded, and no nonce is signed twice (nonceLock.ts);
// - SHARDLINE_EVM_TOKEN_CONTRACTS: a second USDC contract deployed on anvil and configured is the
//   one a node's mint deposit scan reads; a transfer of the devnet's default USDC is not a deposit.
import { Effect, ManagedRuntime, Redacted } from "effect"
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { EvmLedger } from "../../src/chain/evm/EvmLedger.ts"
import { deployDevnetTokens, devnetTokenAddress } from "../../src/chain/evm/devnetTokens.ts"
import { deployMockUsdc, mintMockUsdc } from "../../src/chain/evm/MockUsdc.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import { ensureEvmSent, evmPayoutLeg, readLeg } from "../../src/desk/orders/legs.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { anvilDevKey, startAnvil, type Anvil } from "../support/anvil.ts"
import { deskCaller } from "../support/deskHttp.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { mine, omniBalance, until } from "../support/omniWorld.ts"
import { pgClientLayer } from "../support/pg.ts"
import { createDeskKey } from "../support/services.ts"

let anvil: Anvil
let db: TestDatabase
let node: RunningNode
let base: EvmLedger
let secondUsdc: `0x${string}`
const call = deskCaller(() => node.deskUrl)
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  base = await run(makeViemLedger({ chain: "base", rpcUrl: anvil.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" }))
  await run(deployDevnetTokens(base))
  // A second USDC at another address: what a real chain's USDC is to the devnet's.
  secondUsdc = await run(deployMockUsdc(base, { name: "USD Coin (real)", symbol: "USDC", decimals: 6 }))
  await run(mintMockUsdc(base, secondUsdc, base.hotWallet, 1_000_000_000_000n))
  db = await createTestDatabase("deskevmanvil")
  node = await startNode(db.url, {
    SHARDLINE_EVM_RPC_URLS: `base=${anvil.url}`,
    SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey,
    SHARDLINE_EVM_TOKEN_CONTRACTS: `base:USDC=${secondUsdc}`
  })
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
  await anvil?.stop()
})

/** `n` cash-out orders in `paying` (the rows the payout legs belong to). */
const payingOrders = async (n: number): Promise<Array<string>> => {
  await createDeskKey(db.url, { scopes: ["cashout"] })
  const [k] = await db.query<{ id: string; member_id: string }>("SELECT id, member_id FROM desk_api_keys ORDER BY created_at DESC LIMIT 1")
  const ids: Array<string> = []
  for (let i = 0; i < n; i++) {
    const [row] = await db.query<{ id: string }>(
      `INSERT INTO desk_orders (short_ref, member_id, key_id, kind, status, asset, chain, amount, fee, payout, deposit_address, required_confirmations, expires_at)
       VALUES ($1, $2, $3, 'cashout', 'paying', 'SUSD', 'base', 100, 0, 100, $4, 1, now() + interval '1 hour') RETURNING id`,
      [`TX-N${String(i).padStart(3, "0")}${Math.random().toString(36).slice(2, 6).toUpperCase().padEnd(4, "0")}`, k!.member_id, k!.id, randomLedgerKey().address]
    )
    ids.push(row!.id)
  }
  return ids
}

describe("desk EVM on anvil", () => {
  it("two nodes paying from the same hot wallet at once never sign the same nonce; every payout mined with its first bytes", async () => {
    const perNode = 8
    const orders = await payingOrders(perNode * 2)
    const usdc = devnetTokenAddress(base.hotWallet, "USDC")
    // Two "nodes": each its own EvmLedger (its own in-process send lock) and its own Postgres pool.
    const nodes = await Promise.all(["a", "b"].map(async (name) => ({
      ledger: await run(makeViemLedger({ chain: "base", rpcUrl: anvil.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" })),
      runtime: ManagedRuntime.make(pgClientLayer(db.url, `shardline:test-node-${name}`))
    })))
    try {
      const payouts = orders.map((orderId, i) => ({ orderId, node: nodes[i % 2]!, to: privateKeyToAccount(generatePrivateKey()).address, amount: 1_000_000n + BigInt(i) }))
      const hashes = await Promise.all(payouts.map((p) =>
        p.node.runtime.runPromise(evmPayoutLeg(p.orderId, p.node.ledger, usdc, p.to, p.amount).pipe(Effect.either))))
      // anvil holds a nonce that runs ahead of what it has seen until the gap fills: every send is taken.
      expect(hashes.map((h) => h._tag)).toEqual(payouts.map(() => "Right"))
      const legs = await db.query<{ order_id: string; txid: string; nonce: number; sender: string }>(
        "SELECT order_id, txid, nonce, sender FROM desk_order_legs WHERE order_id = ANY($1::uuid[]) AND leg = 'payout' ORDER BY nonce", [orders])
      expect(legs).toHaveLength(orders.length)
      // One nonce each, contiguous: nobody signed over anybody.
      const nonces = legs.map((l) => l.nonce)
      expect(new Set(nonces).size).toBe(orders.length)
      expect(nonces).toEqual(nonces.map((_, i) => nonces[0]! + i))
      expect(new Set(legs.map((l) => l.sender.toLowerCase()))).toEqual(new Set([base.hotWallet.toLowerCase()]))
      // Every payout's first recorded bytes are what the chain mined (no re-sign), and paid exactly once.
      for (const [i, p] of payouts.entries()) {
        const leg = legs.find((l) => l.order_id === p.orderId)!
        const hash = hashes[i]!
        expect(hash._tag === "Right" ? hash.right : leg.txid).toBe(leg.txid)
        const status = await until(async () => {
          const s = await p.node.runtime.runPromise(Effect.flatMap(readLeg(p.orderId, "payout"), (row) => ensureEvmSent(p.orderId, row!, p.node.ledger)))
          return s === "mined" ? s : undefined
        }, 20_000, `payout ${i} mined`)
        expect(status).toBe("mined")
        expect(await run(base.tokenBalance(usdc, p.to))).toBe(p.amount)
      }
    } finally {
      await Promise.all(nodes.map((n) => n.runtime.dispose()))
    }
  }, 90_000)

  it("reads the configured USDC contract for a mint's deposit; the devnet's default USDC is not a deposit", async () => {
    expect(node.config.evmTokenContracts).toEqual([{ chain: "base", symbol: "USDC", address: secondUsdc }])
    const key = await createDeskKey(db.url, { scopes: ["stables"] })
    const recipient = randomLedgerKey().address
    const order = (await call("POST", "/stables/orders", key.apiKey, { asset: "XUSD", direction: "mint", chain: "base", token: "USDC", recipient, amount: 30 })).body
    expect(order.status).toBe("awaiting_deposit")
    // The devnet's own USDC (not the configured contract) paid to the address: not seen.
    await run(base.erc20Transfer(devnetTokenAddress(base.hotWallet, "USDC"), order.depositAddress, 30_000_000n))
    await run(base.mine(4))
    await new Promise((r) => setTimeout(r, 4_000))
    expect((await call("GET", `/cashout/orders/${order.id}`, key.apiKey)).body).toMatchObject({ status: "awaiting_deposit", depositTxid: null })
    // The configured contract: the deposit, confirmed, the token granted.
    const depositTxid = await run(base.erc20Transfer(secondUsdc, order.depositAddress, 30_000_000n))
    const done = await until(async () => {
      const r = await call("GET", `/cashout/orders/${order.id}`, key.apiKey)
      if (["awaiting_deposit", "deposit_seen"].includes(r.body.status)) await run(base.mine(1))
      if (r.body.status === "paying") await mine(node)
      return ["released", "failed", "refunding"].includes(r.body.status) ? r.body : undefined
    }, 60_000, "the mint released")
    expect(done).toMatchObject({ status: "released", depositTxid, amountReceived: "30" })
    const property = Number((await db.query<{ p: string }>("SELECT property_id::text AS p FROM desk_tokens WHERE code = 'XUSD'"))[0]!.p)
    expect(await omniBalance(node, recipient, property)).toBe(2_998_500_000n)
  }, 90_000)
})
