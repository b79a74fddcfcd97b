// A settlement leg's next row and its Settlement's next check, from what the ledger and the Omni
// indexer said (src/exchange/settlement/legState.ts).
import { afterEach, describe, expect, it } from "vitest"
import { makeUtxoDevnet, type UtxoDevnetHandle } from "../../../src/chain/ledger/devnet.ts"
import { spendable } from "../../../src/chain/ledger/UtxoLedger.ts"
import { buildSend } from "../../../src/chain/txBuilder.ts"
import {
  afterSighting, type BlockFacts, checkSlackMs, factsOfBlocks, type LegWritten, needsWrite, nextCheckInMs, type OpenLeg, shownConfirmations, signedGraceMs, sweepStep
} from "../../../src/exchange/settlement/legState.ts"
import { ok, run, testWallet } from "../../support/utxoLedgerContract.ts"

const inBlock = (confirmations: number, omni: { valid: true } | { valid: false; reason: string } | undefined) =>
  ({ _tag: "InBlock", confirmations, blockHeight: 200, blockHash: "ab".repeat(32), omni }) as const

describe("afterSighting", () => {
  it("writes nothing when the ledger did not answer", () => {
    expect(afterSighting({ _tag: "Unknown" }, 6)).toBeUndefined()
  })
  it("sends the stored bytes again when the ledger does not know the transaction", () => {
    expect(afterSighting({ _tag: "NotFound" }, 6)).toMatchObject({ status: "broadcast", rebroadcast: true, confirmations: 0, blockHeight: null })
  })
  it("a transaction back in the mempool (reorged out) loses its block", () => {
    expect(afterSighting({ _tag: "InMempool" }, 6)).toEqual({ status: "broadcast", confirmations: 0, blockHeight: null, blockHash: null, failure: null, rebroadcast: false })
  })
  it("is confirmed below the final depth and final at it, once the indexer judged it valid", () => {
    expect(afterSighting(inBlock(1, { valid: true }), 6)).toMatchObject({ status: "confirmed", confirmations: 1, blockHeight: 200 })
    expect(afterSighting(inBlock(5, { valid: true }), 6)?.status).toBe("confirmed")
    expect(afterSighting(inBlock(6, { valid: true }), 6)?.status).toBe("final")
    expect(afterSighting(inBlock(9, undefined), 6)?.status).toBe("confirmed") // the view has not applied that block yet
  })
  it("fails with the indexer's reason an Omni send it judged invalid", () => {
    expect(afterSighting(inBlock(1, { valid: false, reason: "property 9 does not exist" }), 6)).toMatchObject({
      status: "failed", failure: "the Omni indexer judged the send invalid: property 9 does not exist"
    })
  })
})

describe("nextCheckInMs", () => {
  const block = 10_000
  it("looks again after one block while a leg is not in a block", () => {
    expect(nextCheckInMs([{ status: "broadcast", confirmations: 0 }, { status: "confirmed", confirmations: 3 }], 6, block)).toBe(block + checkSlackMs)
  })
  it("waits for the final depth once both legs are confirmed", () => {
    expect(nextCheckInMs([{ status: "confirmed", confirmations: 1 }, { status: "confirmed", confirmations: 2 }], 6, block)).toBe(4 * block + checkSlackMs)
    expect(nextCheckInMs([{ status: "confirmed", confirmations: 7 }, { status: "final", confirmations: 6 }], 6, block)).toBe(block + checkSlackMs)
  })
  it("stops once every leg is final or failed", () => {
    expect(nextCheckInMs([{ status: "final", confirmations: 6 }, { status: "failed", confirmations: 1 }], 6, block)).toBeUndefined()
  })
})

describe("sweepStep: a market's legs followed once per block (issue 22.3)", () => {
  const hash = (c: string) => c.repeat(64)
  const leg = (over: Partial<OpenLeg>): OpenLeg => ({
    tradeId: "7", leg: "base", grantId: "g", status: "broadcast", txHex: "00", txid: hash("a"),
    confirmations: 0, blockHeight: null, blockHash: null, ageMs: 0, ...over
  })
  const facts: BlockFacts = {
    tipHeight: 105,
    hashAt: new Map([[100, hash("1")], [104, hash("4")], [105, hash("5")]]),
    minedIn: new Map([["01bb", { height: 104, hash: hash("4") }]])
  }
  const timing = { staleMs: 21_000, signAfterMs: 11_000 }

  it("a leg still in its block gets its confirmations from the tip, no lookup", () => {
    expect(sweepStep(leg({ status: "confirmed", confirmations: 3, blockHeight: 100, blockHash: hash("1") }), facts, timing))
      .toEqual({ _tag: "mined", confirmations: 6, blockHeight: 100, blockHash: hash("1") })
  })
  it("a sent leg found in a new block's transactions (by its bytes) is mined there", () => {
    expect(sweepStep(leg({ txHex: "01bb", txid: hash("b") }), facts, timing)).toEqual({ _tag: "mined", confirmations: 2, blockHeight: 104, blockHash: hash("4") })
  })

  const open: Array<UtxoDevnetHandle> = []
  afterEach(() => { for (const d of open.splice(0)) d.close() })
  it("a leg the ledger mined is found in the facts of the ledger's own blocks page, with no lookup", async () => {
    // Before the fix the sweep keyed the page's transactions (hex, as UtxoLedger's blocks list
    // them) and looked legs up by txid: no leg was ever found, so every one was looked up on its
    // own (getrawtransaction + getblockheader on litecoind) once stale.
    const d = makeUtxoDevnet()
    open.push(d)
    const alice = testWallet(0x11, d.ledger)
    const bob = testWallet(0x22, d.ledger)
    await run(d.ledger.mine(d.ledger.params.coinbaseMaturity + 1, alice.address))
    const [coin] = spendable(await run(d.ledger.listUnspent([alice.address])), d.ledger.params)
    const tx = ok(buildSend(d.ledger.params, { inputs: [coin!], signer: { privateKey: alice.privateKey }, changeAddress: alice.address, outputs: [{ address: bob.address, value: 100_000n }] }))
    await run(d.ledger.broadcast(tx.hex))
    const [hash1] = await run(d.ledger.mine(1, bob.address))
    const tip = await run(d.ledger.tip)
    const page = await run(d.ledger.blocks(tip.height, 1))
    const pageFacts = factsOfBlocks(tip.height, page.blocks)
    expect(pageFacts.hashAt.get(tip.height)).toBe(hash1)
    expect(sweepStep(leg({ txHex: tx.hex, txid: tx.txid, ageMs: 60_000 }), pageFacts, timing))
      .toEqual({ _tag: "mined", confirmations: 1, blockHeight: tip.height, blockHash: hash1 })
    // A leg not in the page, sent long ago, is still looked up on its own.
    expect(sweepStep(leg({ txHex: "01cc", txid: hash("c"), ageMs: 60_000 }), pageFacts, timing)).toEqual({ _tag: "look" })
  })
  it("a leg whose block is no longer at its height is looked up on its own (a reorg)", () => {
    expect(sweepStep(leg({ status: "confirmed", confirmations: 2, blockHeight: 104, blockHash: hash("9") }), facts, timing)).toEqual({ _tag: "look" })
  })
  it("a leg in a block needs no bytes: the sweep does not read them, and it is neither signed nor lost for that", () => {
    const mined = { status: "confirmed" as const, confirmations: 1, txHex: null, ageMs: 60_000 }
    expect(sweepStep(leg({ ...mined, blockHeight: 100, blockHash: hash("1") }), facts, timing))
      .toEqual({ _tag: "mined", confirmations: 6, blockHeight: 100, blockHash: hash("1") })
    expect(sweepStep(leg({ ...mined, blockHeight: 104, blockHash: hash("9") }), facts, timing)).toEqual({ _tag: "look" })
  })
  it("a recently sent leg not mined yet waits; one out of every block for about two blocks is looked up", () => {
    expect(sweepStep(leg({ ageMs: 5_000 }), facts, timing)).toEqual({ _tag: "wait" })
    expect(sweepStep(leg({ ageMs: 21_000 }), facts, timing)).toEqual({ _tag: "look" })
  })
  it("a leg stored as signed whose broadcast was never recorded is looked up after a short grace", () => {
    expect(sweepStep(leg({ status: "signed", ageMs: 100 }), facts, timing)).toEqual({ _tag: "wait" })
    expect(sweepStep(leg({ status: "signed", ageMs: signedGraceMs }), facts, timing)).toEqual({ _tag: "look" })
  })
  it("an unsigned leg is left to the market's inline signing, then signed by the sweep", () => {
    expect(sweepStep(leg({ status: "recorded", txHex: null, txid: null, ageMs: 1_000 }), facts, timing)).toEqual({ _tag: "wait" })
    expect(sweepStep(leg({ status: "recorded", txHex: null, txid: null, ageMs: 11_000 }), facts, timing)).toEqual({ _tag: "sign" })
  })
})

describe("needsWrite: a leg's row is written when something but its count changes", () => {
  const block = { blockHeight: 200, blockHash: "ab".repeat(32) }
  const confirmedAt = (confirmations: number): LegWritten => ({ status: "confirmed", confirmations, ...block })
  const sent: LegWritten = { status: "broadcast", confirmations: 0, blockHeight: null, blockHash: null }

  it("a confirmed leg that only got another block on top is not rewritten", () => {
    // Before: the sweep wrote every confirmed leg's row every block to bump its count.
    expect(needsWrite(confirmedAt(2), afterSighting(inBlock(3, { valid: true }), 6)!, 0)).toBe(false)
    expect(needsWrite(confirmedAt(1), afterSighting(inBlock(9, undefined), 6)!, 0)).toBe(false) // past the depth, not judged yet
  })
  it("writes a leg's first block, its final depth and its failure", () => {
    expect(needsWrite(sent, afterSighting(inBlock(1, undefined), 6)!, 0)).toBe(true)
    expect(needsWrite(confirmedAt(5), afterSighting(inBlock(6, { valid: true }), 6)!, 0)).toBe(true)
    expect(needsWrite(confirmedAt(2), afterSighting(inBlock(3, { valid: false, reason: "no" }), 6)!, 0)).toBe(true)
  })
  it("writes a leg a reorg moved to another block, or back to the mempool", () => {
    const moved = afterSighting({ _tag: "InBlock", confirmations: 1, blockHeight: 201, blockHash: "cd".repeat(32), omni: undefined }, 6)!
    expect(needsWrite(confirmedAt(2), moved, 0)).toBe(true)
    const sameHeight = afterSighting({ _tag: "InBlock", confirmations: 2, blockHeight: 200, blockHash: "cd".repeat(32), omni: undefined }, 6)!
    expect(needsWrite(confirmedAt(2), sameHeight, 0)).toBe(true)
    expect(needsWrite(confirmedAt(2), afterSighting({ _tag: "InMempool" }, 6)!, 0)).toBe(true)
  })
  it("writes a rebroadcast, and nothing for a sent leg still in the mempool", () => {
    expect(needsWrite(sent, afterSighting({ _tag: "NotFound" }, 6)!, 1)).toBe(true)
    expect(needsWrite(sent, afterSighting({ _tag: "NotFound" }, 6)!, 0)).toBe(false) // the ledger refused the bytes: nothing changed
    expect(needsWrite(sent, afterSighting({ _tag: "InMempool" }, 6)!, 0)).toBe(false)
    expect(needsWrite({ ...sent, status: "signed" }, afterSighting({ _tag: "InMempool" }, 6)!, 0)).toBe(true)
  })
})

describe("shownConfirmations: a confirmed leg's count follows its market's tip", () => {
  it("counts a confirmed leg from the tip, never below its row", () => {
    expect(shownConfirmations({ status: "confirmed", confirmations: 1, blockHeight: 200 }, 202)).toBe(3)
    expect(shownConfirmations({ status: "confirmed", confirmations: 2, blockHeight: 200 }, 199)).toBe(2) // a tip recorded before the leg's block
    expect(shownConfirmations({ status: "confirmed", confirmations: 2, blockHeight: 200 }, null)).toBe(2) // no tip recorded yet
  })
  it("a final leg keeps the depth it was judged final at; a leg with no block shows its row", () => {
    expect(shownConfirmations({ status: "final", confirmations: 6, blockHeight: 200 }, 230)).toBe(6)
    expect(shownConfirmations({ status: "broadcast", confirmations: 0, blockHeight: null }, 230)).toBe(0)
    expect(shownConfirmations({ status: "failed", confirmations: 1, blockHeight: 200 }, 230)).toBe(1)
  })
})
