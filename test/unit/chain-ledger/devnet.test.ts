// Devnet-only behaviour: fault injection (delayed and lost broadcasts, reorgs), the block clock,
// bounded mempool and blocks, subsidy schedule, determinism and the Effect layer.
import { Transaction } from "bitcoinjs-lib"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { layerDevnet, makeUtxoDevnet, UtxoDevnet, type DevnetOptions, type UtxoDevnetHandle } from "../../../src/chain/ledger/devnet.ts"
import { syncOnce } from "../../../src/chain/ledger/follower.ts"
import { ledgerLimits, spendable, UtxoLedger } from "../../../src/chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../../src/chain/omni/indexer.ts"
import { ledgerParams, litecoinRegtestParams } from "../../../src/chain/params.ts"
import { buildOmni, buildSend, type Utxo } from "../../../src/chain/txBuilder.ts"
import { failure, ok, run, testWallet, type TestWallet } from "../../support/utxoLedgerContract.ts"

const COIN = 100_000_000n
const open: Array<UtxoDevnetHandle> = []
afterEach(() => {
  for (const d of open.splice(0)) d.close()
})

const devnet = (options: DevnetOptions = {}) => {
  const d = makeUtxoDevnet(options)
  open.push(d)
  const alice = testWallet(0x11, d.ledger)
  const bob = testWallet(0x22, d.ledger)
  const burn = testWallet(0x44, d.ledger)
  return { d, ledger: d.ledger, alice, bob, burn }
}

/** `count` mature coinbases for `w`. */
const fund = async (d: UtxoDevnetHandle, w: TestWallet, count = 1): Promise<ReadonlyArray<Utxo>> => {
  await run(d.ledger.mine(count, w.address))
  await run(d.ledger.mine(100, testWallet(0x44, d.ledger).address))
  return spendable(await run(d.ledger.listUnspent([w.address])), d.ledger.params)
}

const pay = (from: TestWallet, input: Utxo, to: TestWallet, value = COIN) =>
  ok(buildSend(ledgerParams, {
    inputs: [input], signer: { privateKey: from.privateKey }, changeAddress: from.address, outputs: [{ address: to.address, value }]
  }))

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** Polls until `check` holds; timers on a loaded machine fire late, so no fixed sleeps for arrivals. */
const eventually = async (check: () => Promise<boolean>, deadlineMs = 3_000): Promise<void> => {
  const until = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`condition not met within ${deadlineMs} ms`)
    await sleep(5)
  }
}

describe("devnet fault injection: broadcasts", () => {
  it("a delayed broadcast answers with its txid at once and reaches the mempool later", async () => {
    const { d, ledger, alice, bob } = devnet()
    const [input] = await fund(d, alice)
    const tx = pay(alice, input!, bob)
    await run(d.faults.delayBroadcasts(1, 60))
    expect(await run(ledger.broadcast(tx.hex))).toBe(tx.txid)
    expect(await failure(ledger.getTx(tx.txid))).toMatchObject({ _tag: "LedgerTxNotFound" })
    // Mined before it arrives: the block does not have it.
    await run(ledger.mine(1, bob.address))
    expect(await run(d.mempool)).toEqual([])
    await eventually(async () => (await run(d.mempool)).length > 0)
    expect(await run(d.mempool)).toEqual([tx.txid])
    expect(await run(d.faults.deliveries)).toEqual([{ txid: tx.txid, fault: "delay", outcome: "accepted" }])
    // The fault was used up: the next broadcast lands at once.
    await run(ledger.mine(100, bob.address))
    const mature = spendable(await run(ledger.listUnspent([bob.address])), ledger.params)[0]!
    const now = pay(bob, mature, alice)
    await run(ledger.broadcast(now.hex))
    expect((await run(ledger.getTx(now.txid))).confirmations).toBe(0)
  })

  it("a dropped broadcast answers with its txid and never arrives; sending it again works", async () => {
    const { d, ledger, alice, bob, burn } = devnet()
    const [input] = await fund(d, alice)
    const tx = pay(alice, input!, bob)
    await run(d.faults.dropBroadcasts(1))
    expect(await run(ledger.broadcast(tx.hex))).toBe(tx.txid)
    await run(ledger.mine(1, burn.address))
    expect(await failure(ledger.getTx(tx.txid))).toMatchObject({ _tag: "LedgerTxNotFound", txid: tx.txid })
    expect(await run(d.faults.deliveries)).toEqual([{ txid: tx.txid, fault: "drop", outcome: "dropped" }])
    expect(await run(ledger.broadcast(tx.hex))).toBe(tx.txid)
    await run(ledger.mine(1, burn.address))
    expect((await run(ledger.getTx(tx.txid))).confirmations).toBe(1)
  })

  it("a faulty broadcast of an invalid transaction is still refused at once; a delayed one that conflicts on arrival is recorded", async () => {
    const { d, ledger, alice, bob } = devnet()
    const [input] = await fund(d, alice)
    const first = pay(alice, input!, bob)
    const second = pay(alice, input!, bob, 2n * COIN)
    await run(d.faults.dropBroadcasts(1))
    expect(await failure(ledger.broadcast("00"))).toMatchObject({ _tag: "LedgerInvalidInput", field: "hex" })
    await run(d.faults.clearFaults)
    await run(d.faults.delayBroadcasts(1, 30))
    await run(ledger.broadcast(second.hex))
    await run(ledger.broadcast(first.hex))
    await eventually(async () => (await run(d.faults.deliveries)).length > 0)
    expect(await run(d.mempool)).toEqual([first.txid])
    const [delivery] = await run(d.faults.deliveries)
    expect(delivery).toMatchObject({ txid: second.txid, fault: "delay", outcome: "rejected" })
    expect(delivery!.reason).toMatch(/txn-mempool-conflict/)
  })

  it("bounds the fault queue", async () => {
    const { d } = devnet()
    expect(await failure(d.faults.dropBroadcasts(0))).toMatchObject({ _tag: "LedgerInvalidInput", field: "count" })
    expect(await failure(d.faults.delayBroadcasts(1, 0))).toMatchObject({ field: "ms" })
    await run(d.faults.dropBroadcasts(1_000))
    expect(await failure(d.faults.dropBroadcasts(1))).toMatchObject({ field: "count" })
  })
})

describe("devnet fault injection: reorg", () => {
  it("a reorg of depth 2 changes the tip hash and un-confirms a tx, which confirms again in the next block", async () => {
    const { d, ledger, alice, bob, burn } = devnet()
    const [input] = await fund(d, alice)
    const tx = pay(alice, input!, bob)
    await run(ledger.broadcast(tx.hex))
    const [txBlock] = await run(ledger.mine(2, burn.address))
    const before = await run(ledger.tip)
    expect(await run(ledger.getTx(tx.txid))).toMatchObject({ confirmations: 2, blockHash: txBlock })

    const outcome = await run(d.faults.reorg({ depth: 2 }))
    expect(outcome).toMatchObject({ requeued: [tx.txid], dropped: [] })
    expect(outcome.disconnected).toEqual([before.hash, txBlock])
    const after = await run(ledger.tip)
    // The default replacement is depth + 1 blocks, as a node needs a branch with more work.
    expect(after.height).toBe(before.height + 1)
    expect(after.hash).not.toBe(before.hash)
    expect((await run(ledger.blockAt(before.height - 1))).hash).not.toBe(txBlock)
    expect(await run(ledger.getTx(tx.txid))).toMatchObject({ confirmations: 0, blockHash: undefined })
    // Bob's output is not in the UTXO set any more; alice's coin is back.
    expect(await run(ledger.listUnspent([bob.address]))).toEqual([])
    expect((await run(ledger.listUnspent([alice.address]))).some((u) => u.txid === input!.txid)).toBe(true)

    const [again] = await run(ledger.mine(1, burn.address))
    expect(await run(ledger.getTx(tx.txid))).toMatchObject({ confirmations: 1, blockHash: again, blockHeight: after.height + 1 })
    expect((await run(ledger.blockAt(after.height + 1))).txs).toContain(tx.hex)
  })

  it("replaces the top blocks; the follower rolls the Omni indexer back and forward again", async () => {
    const { d, ledger, alice, bob, burn } = devnet()
    await fund(d, alice, 2)
    const omni = async (payload: Parameters<typeof buildOmni>[1]["payload"], reference?: TestWallet) => {
      const inputs = spendable(await run(ledger.listUnspent([alice.address])), ledger.params).filter((u) => u.value > COIN).slice(0, 1)
      const built = ok(buildOmni(ledger.params, {
        inputs, signer: { privateKey: alice.privateKey }, changeAddress: alice.address, payload,
        ...(reference === undefined ? {} : { reference: reference.address })
      }))
      await run(ledger.broadcast(built.hex))
      await run(ledger.mine(1, burn.address))
      return built.txid
    }
    await omni({ type: "createManaged", ecosystem: 1, divisible: true, previousPropertyId: 0, category: "", subcategory: "", name: "USD", url: "", data: "" })
    const grant = await omni({ type: "grant", property: 3, amount: 500n, memo: "" }, bob)
    await run(ledger.mine(1, burn.address))
    const indexer = new OmniIndexer({ params: ledger.params })
    await run(syncOnce(ledger, indexer))
    expect(indexer.balance(bob.address, 3)).toBe(500n)
    const before = await run(ledger.tip)
    const grantBlock = (await run(ledger.getTx(grant))).blockHash

    // Depth 2 takes off the grant's block and the empty one above it; the grant is dropped and
    // three blocks replace them (a winning branch is longer).
    const outcome = await run(d.faults.reorg({ depth: 2, orphanedTxs: "drop" }))
    expect(outcome.disconnected).toHaveLength(2)
    expect(outcome.disconnected).toContain(grantBlock)
    expect(outcome.connected).toHaveLength(3)
    expect(outcome.dropped).toEqual([grant])
    const after = await run(ledger.tip)
    expect(after.height).toBe(before.height + 1)
    expect(after.hash).not.toBe(before.hash)
    expect(await failure(ledger.getTx(grant))).toMatchObject({ _tag: "LedgerTxNotFound" })
    const report = await run(syncOnce(ledger, indexer))
    expect(report).toMatchObject({ rolledBack: 2, applied: 3, caughtUp: true })
    expect(indexer.tip()).toEqual(after)
    expect(indexer.balance(bob.address, 3)).toBe(0n)
    expect(indexer.property(3)?.totalTokens).toBe(0n)

    // The same grant sent again, then a reorg that puts orphaned transactions back in the mempool.
    const again = await omni({ type: "grant", property: 3, amount: 500n, memo: "" }, bob)
    await run(syncOnce(ledger, indexer))
    expect(indexer.balance(bob.address, 3)).toBe(500n)
    const back = await run(d.faults.reorg({ depth: 1, blocks: 2 }))
    expect(back.requeued).toEqual([again])
    expect(await run(ledger.getTx(again))).toMatchObject({ confirmations: 0 })
    expect(await run(syncOnce(ledger, indexer))).toMatchObject({ rolledBack: 1, applied: 2 })
    expect(indexer.balance(bob.address, 3)).toBe(0n)
    await run(ledger.mine(1, burn.address))
    await run(syncOnce(ledger, indexer))
    expect(indexer.balance(bob.address, 3)).toBe(500n)
    expect((await run(ledger.getTx(again))).confirmations).toBe(1)
  })

  it("a reorg that removes a coinbase's block drops the transactions that spent it", async () => {
    const { d, ledger, alice, bob } = devnet()
    const [input] = await fund(d, alice)
    const tx = pay(alice, input!, bob)
    await run(ledger.broadcast(tx.hex))
    // Depth 101 takes off the block that paid alice: the spend has no input any more.
    const outcome = await run(d.faults.reorg({ depth: 101 }))
    expect(outcome.connected).toHaveLength(102)
    expect(outcome.dropped).toEqual([tx.txid])
    expect(await run(d.mempool)).toEqual([])
  })

  it("a chain spent inside one block leaves nothing behind when the block is reorged out and dropped", async () => {
    const { d, ledger, alice, bob } = devnet()
    const [input] = await fund(d, alice)
    const parent = pay(alice, input!, alice, COIN)
    const child = ok(buildSend(ledgerParams, {
      inputs: [{ txid: parent.txid, vout: 0, value: COIN, script: alice.script, prevTxHex: parent.hex }],
      signer: { privateKey: alice.privateKey }, changeAddress: alice.address, outputs: [{ address: bob.address, value: COIN / 2n }]
    }))
    await run(ledger.broadcast(parent.hex))
    await run(ledger.broadcast(child.hex))
    await run(ledger.mine(1, bob.address))
    const outcome = await run(d.faults.reorg({ depth: 1, orphanedTxs: "drop" }))
    expect(outcome.dropped).toEqual([parent.txid, child.txid])
    // The parent's output existed only inside that block: the child cannot come back alone.
    expect(await failure(ledger.broadcast(child.hex))).toMatchObject({ _tag: "LedgerTxRejected", code: "missing-inputs" })
    expect(await run(ledger.broadcast(parent.hex))).toBe(parent.txid)
    expect(await run(ledger.broadcast(child.hex))).toBe(child.txid)
  })

  it("mineBlock mines exactly the given transactions in the given order, and refuses a child before its parent", async () => {
    const { d, ledger, alice, bob } = devnet()
    const [a, b] = await fund(d, alice, 2)
    const parent = pay(alice, a!, alice, COIN)
    const child = ok(buildSend(ledgerParams, {
      inputs: [{ txid: parent.txid, vout: 0, value: COIN, script: alice.script, prevTxHex: parent.hex }],
      signer: { privateKey: alice.privateKey }, changeAddress: alice.address, outputs: [{ address: bob.address, value: COIN / 2n }]
    }))
    const other = pay(alice, b!, bob)
    for (const tx of [parent, child, other]) await run(ledger.broadcast(tx.hex))
    const tip = await run(ledger.tip)
    // A miner may not put a spend before what it spends, nor a transaction it never saw.
    expect(await failure(d.faults.mineBlock([child.txid, parent.txid]))).toMatchObject({ _tag: "LedgerInvalidInput", field: "txids" })
    expect(await failure(d.faults.mineBlock(["00".repeat(32)]))).toMatchObject({ _tag: "LedgerInvalidInput", field: "txids" })
    expect((await run(ledger.tip)).height).toBe(tip.height)
    // It may order independent ones as it likes, and leave some out: the independent one first, the child left.
    const hash = await run(d.faults.mineBlock([other.txid, parent.txid]))
    const block = await run(ledger.blockAt(tip.height + 1))
    expect(block.hash).toBe(hash)
    expect(block.txs.slice(1).map((hex) => Transaction.fromHex(hex).getId())).toEqual([other.txid, parent.txid])
    expect(await run(d.mempool)).toEqual([child.txid])
    await run(ledger.mine(1, bob.address))
    expect((await run(ledger.getTx(child.txid))).confirmations).toBe(1)
  })

  it("refuses a reorg deeper than the chain", async () => {
    const { d } = devnet()
    expect(await failure(d.faults.reorg({ depth: 1 }))).toMatchObject({ _tag: "LedgerInvalidInput", field: "depth" })
  })
})

describe("devnet clock and limits", () => {
  it("mines on a clock and stops when asked", async () => {
    const { d, ledger, alice } = devnet({ blockIntervalMs: 20 })
    await eventually(async () => (await run(ledger.tip)).height >= 3)
    const h1 = (await run(ledger.tip)).height
    await run(d.stopClock)
    await sleep(60)
    expect((await run(ledger.tip)).height).toBe(h1)
    await run(d.startClock(20, alice.address))
    await eventually(async () => (await run(ledger.listUnspent([alice.address]))).length >= 2)
    expect(await failure(d.startClock(1))).toMatchObject({ field: "intervalMs" })
  })

  it("halves the subsidy every 150 blocks; coinbases carry the fees", async () => {
    const { d, ledger, alice, bob, burn } = devnet()
    const [input] = await fund(d, alice)
    expect(input!.value).toBe(50n * COIN)
    const tx = pay(alice, input!, bob)
    await run(ledger.broadcast(tx.hex))
    await run(ledger.mine(1, bob.address))
    const mined = (await run(ledger.listUnspent([bob.address]))).find((u) => u.coinbase)
    expect(mined?.value).toBe(50n * COIN + tx.fee)
    await run(ledger.mine(149 - (await run(ledger.tip)).height, burn.address))
    await run(ledger.mine(1, bob.address))
    const halved = (await run(ledger.listUnspent([bob.address]))).filter((u) => u.coinbase).at(-1)
    expect(halved).toMatchObject({ height: 150, value: 25n * COIN })
  })

  it("bounds the mempool and the transactions per block", async () => {
    const { d, ledger, alice, bob, burn } = devnet({ mempoolTxMax: 2, blockTxMax: 1 })
    const inputs = await fund(d, alice, 3)
    const txs = inputs.map((u) => pay(alice, u, bob))
    await run(ledger.broadcast(txs[0]!.hex))
    await run(ledger.broadcast(txs[1]!.hex))
    expect(await failure(ledger.broadcast(txs[2]!.hex))).toMatchObject({ code: "mempool-full" })
    await run(ledger.mine(1, burn.address))
    expect(await run(d.mempool)).toEqual([txs[1]!.txid])
    expect((await run(ledger.getTx(txs[0]!.txid))).confirmations).toBe(1)
  })

  it("checks its arguments", async () => {
    const { ledger, alice } = devnet()
    expect(await failure(ledger.mine(0, alice.address))).toMatchObject({ field: "n" })
    expect(await failure(ledger.mine(1, "not-an-address"))).toMatchObject({ field: "toAddress" })
    expect(await failure(ledger.blocks(0, ledgerLimits.blocksPageMax + 1))).toMatchObject({ field: "limit" })
    expect(await failure(ledger.blocks(-1))).toMatchObject({ field: "fromHeight" })
    expect(await failure(ledger.getTx("xyz"))).toMatchObject({ field: "txid" })
    expect(await failure(ledger.blockAt(-1))).toMatchObject({ field: "height" })
    expect(await failure(ledger.blockAt(1.5))).toMatchObject({ field: "height" })
    expect(await failure(ledger.listUnspent(Array.from({ length: ledgerLimits.listUnspentOwnersMax + 1 }, () => alice.address)))).toMatchObject({ field: "owners" })
    expect(await failure(ledger.testAccept("zz"))).toMatchObject({ field: "hex" })
    // Pages stop at the tip.
    await run(ledger.mine(3, alice.address))
    const page = await run(ledger.blocks(2, 100))
    expect(page.blocks.map((b) => b.height)).toEqual([2, 3])
    expect(page.nextHeight).toBe(4)
    expect((await run(ledger.blocks(10))).blocks).toEqual([])
  })

  it("is deterministic: the same operations give the same block hashes and txids", async () => {
    const a = devnet()
    const b = devnet()
    const hashesA = await run(a.ledger.mine(3, a.alice.address))
    const hashesB = await run(b.ledger.mine(3, b.alice.address))
    expect(hashesA).toEqual(hashesB)
    const block = (await run(a.ledger.blocks(1, 1))).blocks[0]!
    // Real block: the header hashes to the id, the coinbase is BIP-34 shaped.
    expect(Transaction.fromHex(block.txs[0]!).isCoinbase()).toBe(true)
    expect(block.time).toBe(1_700_000_000 + 150)
  })
})

describe("devnet as a layer", () => {
  it("starts the clock with the scope and stops it when the scope closes", async () => {
    const program = Effect.gen(function* () {
      const ledger = yield* UtxoLedger
      const params = ledger.params
      const until = Date.now() + 3_000
      while ((yield* ledger.tip).height < 2 && Date.now() < until) yield* Effect.sleep(5)
      return { ledger, params }
    })
    const { ledger, params } = await Effect.runPromise(Effect.scoped(Effect.provide(program, layerDevnet(litecoinRegtestParams, { blockIntervalMs: 10 }))))
    expect(params).toBe(litecoinRegtestParams)
    const closed = (await run(ledger.tip)).height
    expect(closed).toBeGreaterThanOrEqual(2)
    await sleep(50)
    expect((await run(ledger.tip)).height).toBe(closed)
  })

  it("provides UtxoLedger for the app and UtxoDevnet for tests", async () => {
    const program = Effect.gen(function* () {
      const ledger = yield* UtxoLedger
      const devnet = yield* UtxoDevnet
      const alice = testWallet(0x11, ledger)
      yield* ledger.mine(2, alice.address)
      yield* devnet.faults.reorg({ depth: 1 })
      return { tip: yield* ledger.tip, utxos: yield* ledger.listUnspent([alice.address]) }
    })
    const { tip, utxos } = await Effect.runPromise(Effect.scoped(Effect.provide(program, layerDevnet())))
    expect(tip.height).toBe(3)
    // The replacement block paid the burn script, so alice keeps one coinbase.
    expect(utxos).toHaveLength(1)
  })
})
