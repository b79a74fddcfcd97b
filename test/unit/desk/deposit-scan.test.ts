// The deposit cursor (src/desk/orders/depositScan.ts) on a real in-process devnet: a look reads
// only the blocks it has not read, goes past SCAN_BLOCKS_MAX over several looks, follows a reorg
// that takes the deposit away (and one that does not), and never reads an unfinished look as
// "nothing there".
import { Either, Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { makeUtxoDevnet, type UtxoDevnetHandle } from "../../../src/chain/ledger/devnet.ts"
import { spendable, type UtxoLedgerShape } from "../../../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams } from "../../../src/chain/params.ts"
import { addressScript, buildSend } from "../../../src/chain/txBuilder.ts"
import { HASHES_KEPT, lookForDeposit, newCursor, resetCursor, SCAN_BLOCKS_MAX, stepBack, pushBlock } from "../../../src/desk/orders/depositScan.ts"
import { ok, run, testWallet } from "../../support/utxoLedgerContract.ts"

const COIN = 100_000_000n
const open: Array<UtxoDevnetHandle> = []
afterEach(() => {
  for (const d of open.splice(0)) d.close()
})

/** A devnet whose blockAt calls are counted, a payer with a mature coin, and a fresh deposit address. */
const setup = async () => {
  const d = makeUtxoDevnet()
  open.push(d)
  const payer = testWallet(0x11, d.ledger)
  const deposit = testWallet(0x22, d.ledger)
  const burn = testWallet(0x44, d.ledger)
  await run(d.ledger.mine(1, payer.address))
  await run(d.ledger.mine(ledgerParams.coinbaseMaturity, burn.address))
  const reads = { blockAt: 0 }
  const chain: Pick<UtxoLedgerShape, "tip" | "blockAt"> = {
    tip: d.ledger.tip,
    blockAt: (h) => Effect.suspend(() => { reads.blockAt += 1; return d.ledger.blockAt(h) })
  }
  const target = Buffer.from(Either.getOrThrow(addressScript(deposit.address, d.ledger.params)))
  const pay = async (value: bigint) => {
    const [input] = spendable(await run(d.ledger.listUnspent([payer.address])), d.ledger.params).filter((u) => u.value > value)
    const tx = ok(buildSend(ledgerParams, { inputs: [input!], signer: { privateKey: payer.privateKey }, changeAddress: payer.address, outputs: [{ address: deposit.address, value }] }))
    await run(d.ledger.broadcast(tx.hex))
    return tx.txid
  }
  const mine = (n: number) => run(d.ledger.mine(n, burn.address))
  return { d, chain, reads, target, pay, mine }
}

const takeAll = (_tx: unknown, paid: bigint) => Effect.succeed<bigint | undefined>(paid)

describe("deposit cursor", () => {
  it("reads each block once across looks and counts the deposit's confirmations", async () => {
    const { chain, reads, target, pay, mine } = await setup()
    const start = (await run(chain.tip)).height
    const cursor = newCursor()
    const look = () => run(lookForDeposit(chain, cursor, () => start, target, takeAll))

    expect(await look()).toEqual({ complete: true, found: undefined })
    await mine(5)
    reads.blockAt = 0
    expect(await look()).toEqual({ complete: true, found: undefined })
    expect(reads.blockAt).toBe(5)

    const txid = await pay(COIN)
    await mine(1)
    expect(await look()).toEqual({ complete: true, found: { txid, amount: COIN, confirmations: 1 } })
    await mine(3)
    reads.blockAt = 0
    expect(await look()).toEqual({ complete: true, found: { txid, amount: COIN, confirmations: 4 } })
    expect(reads.blockAt).toBe(3)
    // Nothing new: the tip alone is read.
    reads.blockAt = 0
    expect((await look()).found?.confirmations).toBe(4)
    expect(reads.blockAt).toBe(0)
  })

  it("goes past SCAN_BLOCKS_MAX over several looks, and an unfinished look is not complete", async () => {
    const { chain, target, pay, mine } = await setup()
    const start = (await run(chain.tip)).height
    await mine(SCAN_BLOCKS_MAX + 20)
    const txid = await pay(2n * COIN)
    await mine(1)
    const cursor = newCursor()
    const look = () => run(lookForDeposit(chain, cursor, () => start, target, takeAll))
    expect(await look()).toEqual({ complete: false, found: undefined })
    expect(await look()).toEqual({ complete: true, found: { txid, amount: 2n * COIN, confirmations: 1 } })
  })

  it("a reorg that drops the deposit's block takes the deposit away; mined again, it is found at its new height", async () => {
    const { d, chain, target, pay, mine } = await setup()
    const start = (await run(chain.tip)).height
    const cursor = newCursor()
    const look = () => run(lookForDeposit(chain, cursor, () => start, target, takeAll))
    const txid = await pay(COIN)
    await mine(2)
    expect((await look()).found).toEqual({ txid, amount: COIN, confirmations: 2 })

    // Back to the mempool: the replacement blocks (one more than taken) do not carry it.
    await run(d.faults.reorg({ depth: 2 }))
    expect(await look()).toEqual({ complete: true, found: undefined })
    await mine(1)
    expect(await look()).toEqual({ complete: true, found: { txid, amount: COIN, confirmations: 1 } })

    // Dropped for good.
    await run(d.faults.reorg({ depth: 1, orphanedTxs: "drop" }))
    expect(await look()).toEqual({ complete: true, found: undefined })
  })

  it("a reorg above the deposit's block keeps it, with the new chain's confirmations", async () => {
    const { d, chain, target, pay, mine } = await setup()
    const start = (await run(chain.tip)).height
    const cursor = newCursor()
    const look = () => run(lookForDeposit(chain, cursor, () => start, target, takeAll))
    const txid = await pay(COIN)
    await mine(4)
    expect((await look()).found?.confirmations).toBe(4)
    await run(d.faults.reorg({ depth: 2, blocks: 4 }))
    expect(await look()).toEqual({ complete: true, found: { txid, amount: COIN, confirmations: 6 } })
    // A reorg to a chain of the same height (another hash at the cursor's top).
    await run(d.faults.reorg({ depth: 1, blocks: 1 }))
    expect((await look()).found?.confirmations).toBe(6)
  })

  it("only what accept takes is the deposit; it is asked again on every look", async () => {
    const { chain, target, pay, mine } = await setup()
    const start = (await run(chain.tip)).height
    const first = await pay(COIN)
    await mine(1)
    const second = await pay(3n * COIN)
    await mine(1)
    const cursor = newCursor()
    let judged = false
    const look = () =>
      run(lookForDeposit(chain, cursor, () => start, target, (tx, paid) => Effect.succeed(tx.getId() === first && !judged ? undefined : paid)))
    expect((await look()).found?.txid).toBe(second)
    judged = true
    expect((await look()).found).toEqual({ txid: first, amount: COIN, confirmations: 2 })
  })

  it("stepping back below the kept hashes reads again from the start", () => {
    const cursor = newCursor()
    resetCursor(cursor, 10)
    const target = Buffer.from("00", "hex")
    for (let h = 10; h < 10 + HASHES_KEPT + 5; h++) pushBlock(cursor, { height: h, hash: `h${h}`, txs: [] }, target)
    const top = cursor.top
    for (let i = 0; i < HASHES_KEPT; i++) stepBack(cursor)
    expect(cursor.top).toBe(top - HASHES_KEPT)
    stepBack(cursor)
    expect(cursor.top).toBe(9)
    expect(cursor.hashes.size).toBe(0)
  })
})
