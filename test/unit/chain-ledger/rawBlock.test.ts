// The lean block reader against bitcoinjs' own parse: the same hash, previous hash, time and
// transaction bytes for legacy, segwit and coinbase transactions and for counts and lengths that
// take multi-byte var-ints; and a typed refusal, never a throw, for bytes that are not a block.
import { Block } from "bitcoinjs-lib"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { splitBlock } from "../../../src/chain/ledger/internal/rawBlock.ts"
import { blockOf, coinbaseTx, legacyTx, segwitTx } from "../../support/rawBlocks.ts"

const reference = (hex: string) => {
  const b = Block.fromHex(hex)
  return { hash: b.getId(), prevHash: Buffer.from(b.prevHash!).reverse().toString("hex"), time: b.timestamp, txs: b.transactions!.map((t) => t.toHex()) }
}

describe("splitBlock", () => {
  it("reads a block as bitcoinjs does: header fields and each transaction's exact bytes", () => {
    const prev = "00".repeat(31) + "ab"
    const hex = blockOf(prev, 1_700_000_000, [coinbaseTx(5), legacyTx(1), segwitTx(2), legacyTx(3, 3, 300)]).toHex()
    const split = Either.getOrThrow(splitBlock(hex))
    expect(split).toEqual(reference(hex))
    expect(split.prevHash).toBe(prev)
    expect(split.txs).toHaveLength(4)
  })

  it("reads a count of 253 or more transactions (a 3-byte var-int)", () => {
    const txs = [coinbaseTx(1), ...Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? segwitTx(i) : legacyTx(i)))]
    const hex = blockOf("11".repeat(32), 1_700_000_100, txs).toHex()
    expect(hex.slice(160, 166)).toBe("fd2d01") // 301 transactions
    expect(Either.getOrThrow(splitBlock(hex))).toEqual(reference(hex))
  })

  it("gives lower-case transaction hex whatever case the block came in", () => {
    const hex = blockOf("22".repeat(32), 1_700_000_200, [coinbaseTx(2), legacyTx(9)]).toHex()
    expect(Either.getOrThrow(splitBlock(hex.toUpperCase()))).toEqual(reference(hex))
  })

  it("refuses what is not a whole block, with a reason", () => {
    const hex = blockOf("33".repeat(32), 1_700_000_300, [coinbaseTx(3), segwitTx(4)]).toHex()
    for (const bad of ["", "zz", hex.slice(0, 159), hex.slice(0, -2), hex.slice(0, 200), hex + "00", hex.slice(0, 161) + "ff" + "ff".repeat(8)]) {
      const r = splitBlock(bad)
      expect(Either.isLeft(r), bad.slice(0, 40)).toBe(true)
    }
    expect(splitBlock(hex.slice(0, -2))).toMatchObject({ left: expect.stringContaining("ends inside") })
    expect(splitBlock(hex + "00")).toMatchObject({ left: expect.stringContaining("follow") })
  })
})
