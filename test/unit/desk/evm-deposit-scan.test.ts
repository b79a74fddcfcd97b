// A mint's deposit look on the in-process EVM devnet (src/desk/orders/evmDepositScan.ts) with a
// small page (scanBlocksMax 10): a deposit more than one page above the start is found, a look
// that runs out of pages says it is incomplete and the next ones go on, and final blocks that paid
// nothing are not read again.
import { Effect, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { makeDevnetLedger } from "../../../src/chain/evm/devnet.ts"
import { deployDevnetTokens, devnetTokenAddress } from "../../../src/chain/evm/devnetTokens.ts"
import type { EvmLedger } from "../../../src/chain/evm/EvmLedger.ts"
import { sightEthDeposit } from "../../../src/desk/orders/ethWrap.ts"
import { FINAL_DEPTH, PAGES_PER_LOOK, sightTokenDeposit, type EvmDepositCursor } from "../../../src/desk/orders/evmDepositScan.ts"

const key = Redacted.make("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")
const deposit = "0x52908400098527886E0F7030069857D2E4169EE7"
const PAGE = 10n

const withLedger = <A, E>(f: (ledger: EvmLedger, usdc: string, reads: { pages: number }) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const ledger = yield* makeDevnetLedger({ chain: "base", hotWalletKey: key, scanBlocksMax: PAGE })
    yield* deployDevnetTokens(ledger)
    const reads = { pages: 0 }
    const counted: EvmLedger = { ...ledger, transfers: (...args) => Effect.suspend(() => { reads.pages += 1; return ledger.transfers(...args) }) }
    return yield* f(counted, devnetTokenAddress(ledger.hotWallet, "USDC"), reads)
  })))

describe("a mint's deposit look", () => {
  it("finds a deposit several pages above the start in one look", async () => {
    const r = await withLedger((ledger, usdc) => Effect.gen(function*() {
      const start = (yield* ledger.blockNumber) + 1n
      yield* ledger.mine(Number(PAGE) * 3)
      const hash = yield* ledger.erc20Transfer(usdc, deposit, 7_000_000n)
      yield* ledger.mine(2)
      return { hash, look: yield* sightTokenDeposit(ledger, usdc, deposit, start, { clearedTo: undefined }) }
    }))
    expect(r.look).toEqual({ complete: true, found: { txid: r.hash, amount: 7_000_000n, confirmations: 3 } })
  })

  it("a look out of pages is incomplete; the next looks go on from the final blocks they cleared", async () => {
    const r = await withLedger((ledger, usdc, reads) => Effect.gen(function*() {
      const start = (yield* ledger.blockNumber) + 1n
      // Far more than one look's pages, and enough that most of it is final.
      yield* ledger.mine(Number(PAGE) * PAGES_PER_LOOK * 3)
      const hash = yield* ledger.erc20Transfer(usdc, deposit, 7_000_000n)
      const cursor: EvmDepositCursor = { clearedTo: undefined }
      const first = yield* sightTokenDeposit(ledger, usdc, deposit, start, cursor)
      const clearedAfterFirst = cursor.clearedTo
      const looks = [first]
      while (looks.at(-1)!.complete === false && looks.length < 10) looks.push(yield* sightTokenDeposit(ledger, usdc, deposit, start, cursor))
      reads.pages = 0
      const again = yield* sightTokenDeposit(ledger, usdc, deposit, start, cursor)
      return { hash, first, clearedAfterFirst, looks, again, pagesAgain: reads.pages, head: yield* ledger.blockNumber }
    }))
    expect(r.first).toEqual({ complete: false, found: undefined })
    expect(r.clearedAfterFirst).toBeDefined()
    expect(r.looks.at(-1)!.found?.txid).toBe(r.hash)
    expect(r.looks.length).toBeGreaterThan(1)
    // Once found, a look reads only from the last final block on: at most FINAL_DEPTH blocks.
    expect(r.again.found?.txid).toBe(r.hash)
    expect(r.pagesAgain).toBeLessThanOrEqual(Math.ceil(Number(FINAL_DEPTH) / Number(PAGE)) + 1)
  })

  it("nothing paid: complete, and the final blocks are cleared", async () => {
    const r = await withLedger((ledger, usdc) => Effect.gen(function*() {
      const start = (yield* ledger.blockNumber) + 1n
      yield* ledger.mine(Number(FINAL_DEPTH) + 20)
      const cursor: EvmDepositCursor = { clearedTo: undefined }
      let look = yield* sightTokenDeposit(ledger, usdc, deposit, start, cursor)
      for (let i = 0; i < 5 && !look.complete; i++) look = yield* sightTokenDeposit(ledger, usdc, deposit, start, cursor)
      return { look, cleared: cursor.clearedTo, head: yield* ledger.blockNumber }
    }))
    expect(r.look).toEqual({ complete: true, found: undefined })
    expect(r.cleared).toBe(r.head - FINAL_DEPTH)
  })

  it("an ETH wrap's look that stopped short of the head is incomplete, and the next one finds the deposit further up", async () => {
    // Before: the look read 500 blocks and answered as if it had read to the tip, so an expired
    // wrap far behind took "nothing paid" and a deposit above its first 500 blocks was never seen.
    const r = await withLedger((ledger) => Effect.gen(function*() {
      const from = yield* ledger.blockNumber
      yield* ledger.mine(600)
      const hash = yield* ledger.nativeTransfer(deposit, 1_000n, () => Effect.void)
      const cursor: EvmDepositCursor = { clearedTo: undefined }
      const first = yield* sightEthDeposit(ledger, deposit, Number(from), cursor)
      const second = yield* sightEthDeposit(ledger, deposit, Number(from), cursor)
      return { hash, first, second, cleared: cursor.clearedTo, from }
    }))
    expect(r.first).toEqual({ complete: false, found: undefined })
    expect(r.cleared).toBe(r.from + 500n)
    expect(r.second).toEqual({ complete: true, found: { txid: r.hash, amount: 1_000n, confirmations: 1 } })
  })
})
