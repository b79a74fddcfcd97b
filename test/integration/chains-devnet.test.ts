// A node with its default chains: in-process devnets for the ledger and ethereum, base and bsc,
// mining on a clock. /ops, /metrics and the ops CLI show their heights going up, and a ledger
// payment and a token payout sent through the node's own devnets are confirmed by those clocks.
import { Effect, Schedule } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EvmLedgers } from "../../src/chain/evm/EvmLedger.ts"
import { deployMockUsdc, mintMockUsdc } from "../../src/chain/evm/MockUsdc.ts"
import { spendable, UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { buildSend } from "../../src/chain/txBuilder.ts"
import { chainMetric, eventually, opsChains as opsChainsOf } from "../support/chainsOps.ts"
import { cli } from "../support/cli.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { ok, run, testWallet } from "../support/utxoLedgerContract.ts"

let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  db = await createTestDatabase("chains")
  node = await startNode(db.url, { SHARDLINE_DEVNET_BLOCK_MS: "100" })
})

afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const opsChains = () => opsChainsOf(node.baseUrl)
const metric = (name: string, chain: string) => chainMetric(node.baseUrl, name, chain)

describe("a node with devnet chains", () => {
  it("reports every chain in /ops, each with a height that rises with the block clock", async () => {
    const first = await eventually(async () => {
      const chains = await opsChains()
      return chains.length === 6 && chains.every((c) => c.available && c.height! > 0) ? chains : undefined
    })
    expect(first.map((c) => [c.chain, c.kind, c.node])).toEqual([
      ["ledger", "devnet", "shardline:embedded"],
      ["ethereum", "devnet", "shardline:embedded"],
      ["base", "devnet", "shardline:embedded"],
      ["bsc", "devnet", "shardline:embedded"],
      ["btc", "devnet", "shardline:embedded"],
      ["ltc", "devnet", "shardline:embedded"]
    ])
    expect(first.map((c) => c.chainId)).toEqual([undefined, 1, 8453, 56, undefined, undefined])
    // A block every 100 ms; the node reports every 2 s.
    const later = await eventually(async () => {
      const chains = await opsChains()
      return chains.every((c, i) => c.height! > first[i]!.height!) ? chains : undefined
    })
    for (const c of later) expect(c).toMatchObject({ available: true })
  })

  it("exports shardline_chain_height and shardline_chain_up per chain in /metrics", async () => {
    const h1 = await eventually(() => metric("shardline_chain_height", "ledger"))
    const h2 = await eventually(async () => {
      const h = await metric("shardline_chain_height", "ledger")
      return h !== undefined && h > h1 ? h : undefined
    })
    expect(h2).toBeGreaterThan(h1)
    for (const chain of ["ledger", "ethereum", "base", "bsc", "btc", "ltc"]) {
      expect(await metric("shardline_chain_up", chain)).toBe(1)
      expect(await metric("shardline_chain_height", chain)).toBeGreaterThan(0)
    }
  })

  it("the ops CLI prints the chains section", async () => {
    const out = await cli(["ops"], { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey })
    expect(out.code).toBe(0)
    expect(out.stdout).toMatch(/^chains:$/m)
    expect(out.stdout).toMatch(/^ {2}ledger +devnet +height \d+ +shardline:embedded$/m)
    expect(out.stdout).toMatch(/^ {2}base +devnet +block \d+ +chain id 8453 +shardline:embedded$/m)
    expect(out.stdout).toMatch(/^ {2}ltc +devnet +height \d+ +shardline:embedded$/m)
  })

  it("confirms a transaction broadcast to the node's ledger devnet, mined by the node's block clock", async () => {
    const ledger = await node.run(UtxoLedger)
    const alice = testWallet(0x61, ledger)
    const bob = testWallet(0x62, ledger)
    const burn = testWallet(0x63, ledger)
    // A coinbase for alice, matured by 100 blocks on top.
    await run(ledger.mine(1, alice.address))
    await run(ledger.mine(100, burn.address))
    const minedTo = (await run(ledger.tip)).height
    const coins = spendable(await run(ledger.listUnspent([alice.address])), ledger.params)
    expect(coins).toHaveLength(1)
    const tx = ok(buildSend(ledger.params, {
      inputs: coins,
      signer: { privateKey: alice.privateKey },
      changeAddress: alice.address,
      outputs: [{ address: bob.address, value: 100_000_000n }]
    }))
    expect(await run(ledger.broadcast(tx.hex))).toBe(tx.txid)
    // Nothing mines on demand from here: the clock puts it in a block and keeps adding blocks.
    const confirmed = await eventually(async () => {
      const t = await run(ledger.getTx(tx.txid))
      return t.confirmations >= 3 ? t : undefined
    })
    expect(confirmed.blockHeight).toBeGreaterThan(minedTo)
    expect(await run(ledger.listUnspent([bob.address]))).toEqual([
      expect.objectContaining({ txid: tx.txid, vout: 0, value: 100_000_000n, coinbase: false, height: confirmed.blockHeight })
    ])
    // /ops and /metrics report this chain: their heights pass the block that holds the payment.
    await eventually(async () => ((await opsChains())[0]!.height! >= confirmed.blockHeight! ? true : undefined))
    expect(await metric("shardline_chain_height", "ledger")).toBeGreaterThanOrEqual(confirmed.blockHeight!)
  })

  it("confirms a token payout from the node's EVM hot wallet, mined by the base devnet's clock", async () => {
    const payee = "0x00000000000000000000000000000000000000b0"
    const payout = await node.run(Effect.gen(function*() {
      const base = yield* (yield* EvmLedgers).get("base")
      const usdc = yield* deployMockUsdc(base, { name: "USD Coin", symbol: "USDC", decimals: 6 })
      yield* mintMockUsdc(base, usdc, base.hotWallet, 1_000_000n)
      const hash = yield* base.erc20Transfer(usdc, payee, 12_345n)
      // No mine call: wait for the clock to bury the payout under one more block.
      const confirmations = yield* base.confirmations(hash).pipe(
        Effect.repeat({ until: (n) => n >= 2, schedule: Schedule.spaced("50 millis") }),
        Effect.timeout("10 seconds")
      )
      return { confirmations, balance: yield* base.tokenBalance(usdc, payee) }
    }))
    expect(payout.confirmations).toBeGreaterThanOrEqual(2)
    expect(payout.balance).toBe(12_345n)
  })
})
