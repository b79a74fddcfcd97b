// The chain follower over the devnet: catching up page by page, reorgs to a longer, equal or
// shorter chain, bounds on work and rollback depth, and a consumer that refuses a block.
import { Data, Effect, Either, Fiber } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { makeUtxoDevnet, type UtxoDevnetHandle } from "../../../src/chain/ledger/devnet.ts"
import { follow, syncOnce, type BlockConsumer } from "../../../src/chain/ledger/follower.ts"
import type { LedgerBlock } from "../../../src/chain/ledger/UtxoLedger.ts"
import { failure, run, testWallet } from "../../support/utxoLedgerContract.ts"

class Refused extends Data.TaggedError("Refused")<{ readonly message: string }> {}

/** Records the chain it has applied: heights and hashes, like any consumer with an undo log. */
class ChainCopy implements BlockConsumer {
  readonly applied: Array<{ height: number; hash: string }> = []
  refuseAt: number | undefined
  tip() { return this.applied.at(-1) }
  apply(block: LedgerBlock): Either.Either<unknown, Refused> {
    if (block.height === this.refuseAt) return Either.left(new Refused({ message: "refused" }))
    this.applied.push({ height: block.height, hash: block.hash })
    return Either.right(undefined)
  }
  rollback(): Either.Either<unknown, Refused> {
    const last = this.applied.pop()
    return last === undefined ? Either.left(new Refused({ message: "empty" })) : Either.right(last)
  }
}

const open: Array<UtxoDevnetHandle> = []
afterEach(() => { for (const d of open.splice(0)) d.close() })
const setup = async (blocks: number) => {
  const d = makeUtxoDevnet()
  open.push(d)
  const to = testWallet(0x55, d.ledger).address
  await run(d.ledger.mine(blocks, to))
  return { d, ledger: d.ledger, to }
}
const ledgerHashes = async (d: UtxoDevnetHandle) => (await run(d.ledger.blocks(0, 100))).blocks.map((b) => b.hash)

describe("chain follower", () => {
  it("catches up page by page from genesis and then stays put", async () => {
    const { d, ledger } = await setup(25)
    const copy = new ChainCopy()
    expect(await run(syncOnce(ledger, copy, { pageSize: 7 }))).toMatchObject({ applied: 26, rolledBack: 0, caughtUp: true })
    expect(copy.applied.map((b) => b.hash)).toEqual(await ledgerHashes(d))
    expect(await run(syncOnce(ledger, copy))).toMatchObject({ applied: 0, caughtUp: true })
  })

  it("starts at startHeight and stops after applyMax blocks", async () => {
    const { ledger } = await setup(10)
    const copy = new ChainCopy()
    expect(await run(syncOnce(ledger, copy, { startHeight: 5, applyMax: 3 }))).toMatchObject({ applied: 3, caughtUp: false })
    expect(copy.applied.map((b) => b.height)).toEqual([5, 6, 7])
    expect(await run(syncOnce(ledger, copy))).toMatchObject({ applied: 3, caughtUp: true })
  })

  it.each([
    ["longer", 3, 5],
    ["equal", 3, 3],
    ["shorter", 3, 1]
  ])("follows a reorg to a %s chain", async (_, depth, blocks) => {
    const { d, ledger, to } = await setup(10)
    const copy = new ChainCopy()
    await run(syncOnce(ledger, copy))
    await run(d.faults.reorg({ depth, blocks, toAddress: to }))
    const report = await run(syncOnce(ledger, copy))
    expect(report).toMatchObject({ rolledBack: depth, applied: blocks, caughtUp: true })
    expect(copy.applied.map((b) => b.hash)).toEqual(await ledgerHashes(d))
  })

  it("gives up on a reorg deeper than rollbackMax", async () => {
    const { d, ledger } = await setup(10)
    const copy = new ChainCopy()
    await run(syncOnce(ledger, copy))
    await run(d.faults.reorg({ depth: 4 }))
    expect(await failure(syncOnce(ledger, copy, { rollbackMax: 3 }))).toMatchObject({ _tag: "FollowerError" })
  })

  it("reports a block the consumer refuses, with its height", async () => {
    const { ledger } = await setup(5)
    const copy = new ChainCopy()
    copy.refuseAt = 3
    expect(await failure(syncOnce(ledger, copy))).toMatchObject({ _tag: "FollowerError", height: 3, message: "refused" })
    expect(copy.tip()?.height).toBe(2)
  })

  it("follows on a timer until interrupted", async () => {
    const { d, ledger, to } = await setup(2)
    const copy = new ChainCopy()
    const fiber = Effect.runFork(follow(ledger, copy, { pollMs: 10 }))
    await run(ledger.mine(3, to))
    const target = await run(d.ledger.tip)
    const until = Date.now() + 3_000
    while (copy.tip()?.hash !== target.hash && Date.now() < until) await new Promise((r) => setTimeout(r, 5))
    expect(copy.tip()).toEqual(target)
    await Effect.runPromise(Fiber.interrupt(fiber))
  })
})
