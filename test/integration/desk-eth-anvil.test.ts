// ETH wrapping against a real EVM node (anvil as ethereum, chain id 1): the viem EvmLedger's
// native-coin port (a payment recorded before it is sent, native deposits found by reading
// blocks), then a node whose ethereum is that anvil: an ETH wrap paid from a customer's own
// anvil account, confirmed 12 blocks deep, wETH granted; and an ETH unwrap paid from the hot
// wallet (SHARDLINE_EVM_HOT_WALLET_KEY), exactly amount − fee in wei. The ledger, BTC and LTC
// stay in-process devnets.
import { Effect, Redacted } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SignedEvmTx } from "../../src/chain/evm/EvmLedger.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { type Anvil, anvilDevKey, startAnvil } from "../support/anvil.ts"
import { deskCustomer } from "../support/deskCustomer.ts"
import { deskCaller } from "../support/deskHttp.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { mine, omniBalance, until } from "../support/omniWorld.ts"
import { createDeskKey } from "../support/services.ts"

/** anvil's second default account: a customer's own wallet, prefunded with 10,000 ETH. */
const customerKey = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"

let anvil: Anvil
let db: TestDatabase
let node: RunningNode
const call = deskCaller(() => node.deskUrl)

const ledgerOf = (key: string) => makeViemLedger({ chain: "ethereum", rpcUrl: anvil.url, hotWalletKey: Redacted.make(key), devRpc: "anvil" })

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 })
  db = await createTestDatabase("deskethanvil")
  node = await startNode(db.url, { SHARDLINE_EVM_RPC_URLS: `ethereum=${anvil.url}`, SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey })
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await Promise.all([db?.drop(), anvil?.stop()])
})

describe("ETH wrapping on anvil", () => {
  it("the viem ledger pays native ETH with its bytes recorded first, and finds native payments by reading blocks", { timeout: 60_000 }, async () => {
    const to = privateKeyToAccount(generatePrivateKey()).address
    const other = privateKeyToAccount(generatePrivateKey()).address
    const result = await Effect.runPromise(Effect.gen(function*() {
      const ledger = yield* ledgerOf(customerKey)
      const from = (yield* ledger.blockNumber) + 1n
      const recorded: Array<SignedEvmTx> = []
      const hash = yield* ledger.nativeTransfer(to, 123_456_789n, (signed) => Effect.sync(() => void recorded.push(signed)))
      yield* ledger.nativeTransfer(other, 5n)
      yield* ledger.mine(3)
      const head = yield* ledger.blockNumber
      const scan = yield* ledger.nativeTransfers(from, head, [to])
      return { hash, recorded, scan, head, balance: yield* ledger.nativeBalance(to), confirmations: yield* ledger.confirmations(hash) }
    }))
    expect(result.recorded).toHaveLength(1)
    expect(result.recorded[0]!.hash).toBe(result.hash)
    expect(result.recorded[0]!.nonce).toEqual(expect.any(Number))
    expect(result.balance).toBe(123_456_789n)
    // Only the payment to the watched address, with its block.
    expect(result.scan.transfers.map((t) => [t.txHash, t.to.toLowerCase(), t.value])).toEqual([[result.hash, to.toLowerCase(), 123_456_789n]])
    expect(result.scan.nextBlock).toBe(result.head + 1n)
    expect(result.confirmations).toBe(Number(result.head - result.scan.transfers[0]!.blockNumber) + 1)
  })

  it("wraps ETH paid from the customer's own account and unwraps wETH to native ETH from the hot wallet", { timeout: 180_000 }, async () => {
    const key = await createDeskKey(db.url, { scopes: ["wrap"] })
    const property = Number((await db.query<{ p: string }>("SELECT property_id::text AS p FROM desk_tokens WHERE code = 'wETH'"))[0]!.p)
    const payoutAddress = randomLedgerKey().address
    const created = await call("POST", "/wrap/orders", key.apiKey, { direction: "wrap", asset: "ETH", amount: "1.5", payoutAddress })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ chain: "ethereum", amount: "1.5", fee: "0.0015", payoutAmount: "1.4985", requiredConfirmations: 12 })
    const customer = await Effect.runPromise(ledgerOf(customerKey))
    const depositTxid = await Effect.runPromise(customer.nativeTransfer(created.body.depositAddress, 15n * 10n ** 17n))
    const wrapped = await until(async () => {
      const r = await call("GET", `/wrap/orders/${created.body.shortRef}`, key.apiKey)
      if (["failed", "refunded"].includes(r.body.status)) throw new Error(`wrap ended ${r.body.status}: ${r.body.failure}`)
      if (r.body.status === "released") return r.body
      await Effect.runPromise(customer.mine(2))
      await mine(node)
      return undefined
    }, 90_000, "the ETH wrap released", 500)
    expect(wrapped).toMatchObject({ depositTxid, amountReceived: "1.5" })
    expect(await omniBalance(node, payoutAddress, property)).toBe(149_850_000n)

    const holder = await deskCustomer(node, db.url, "wETH", 50_000_000n)
    const ethTo = privateKeyToAccount(generatePrivateKey()).address
    const unwrap = await call("POST", "/wrap/orders", key.apiKey, { direction: "unwrap", asset: "ETH", amount: "0.5", payoutAddress: ethTo })
    expect(unwrap.status).toBe(201)
    await holder.send(unwrap.body.depositAddress, 50_000_000n)
    const done = await until(async () => {
      const r = await call("GET", `/wrap/orders/${unwrap.body.id}`, key.apiKey)
      if (["failed", "refunded"].includes(r.body.status)) throw new Error(`unwrap ended ${r.body.status}: ${r.body.failure}`)
      if (r.body.status === "released") return r.body
      await mine(node)
      return undefined
    }, 90_000, "the ETH unwrap released", 500)
    expect(await Effect.runPromise(customer.nativeBalance(ethTo))).toBe(4995n * 10n ** 14n)
    const [leg] = await db.query<{ txid: string; raw: string; nonce: number }>(`SELECT txid, raw, nonce FROM desk_order_legs WHERE order_id = '${unwrap.body.id}' AND leg = 'payout'`)
    expect(leg!.txid).toBe(done.payoutTxid)
    expect(await Effect.runPromise(customer.confirmations(done.payoutTxid))).toBeGreaterThanOrEqual(1)
  })
})
