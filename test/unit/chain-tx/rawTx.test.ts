// The lean serializer (rawTx.ts) against bitcoinjs' Transaction: the same bytes, txid, size and
// legacy SIGHASH_ALL digest, including var-ints past one byte (300 outputs, a 300-byte script).
import { randomBytes } from "node:crypto"
import { Transaction } from "bitcoinjs-lib"
import { describe, expect, it } from "vitest"
import { legacySize, serialize, sighashAll, txidOf } from "../../../src/chain/rawTx.ts"

const reference = (inputs: ReadonlyArray<{ txid: string; vout: number }>, scriptSigs: ReadonlyArray<Uint8Array>, outputs: ReadonlyArray<{ script: Uint8Array; value: bigint }>) => {
  const tx = new Transaction()
  tx.version = 2
  inputs.forEach((u, i) => tx.addInput(Buffer.from(u.txid, "hex").reverse(), u.vout, 0xffffffff, Buffer.from(scriptSigs[i]!)))
  for (const o of outputs) tx.addOutput(o.script, o.value)
  return tx
}

describe("raw transaction bytes", () => {
  it.each([
    ["a leg: one input, OP_RETURN, change and reference", 1, 3, 25],
    ["three inputs, long scripts", 3, 2, 300],
    ["300 outputs (a three-byte var-int)", 2, 300, 25]
  ])("%s: the bytes, txid, size and every input's digest are bitcoinjs'", (_, nIn, nOut, scriptLen) => {
    const inputs = Array.from({ length: nIn }, (_, i) => ({ txid: randomBytes(32).toString("hex"), vout: i * 70_000 }))
    const scriptSigs = inputs.map((_, i) => randomBytes(i === 0 ? 107 : 140))
    const outputs = Array.from({ length: nOut }, (_, i) => ({ script: randomBytes(i === 0 ? scriptLen : 25), value: BigInt(i) * 123_456_789n + (i === 1 ? (1n << 62n) : 0n) }))
    const ours = serialize(inputs, scriptSigs, outputs)
    const theirs = reference(inputs, scriptSigs, outputs)
    expect(ours.toString("hex")).toBe(theirs.toHex())
    expect(txidOf(ours)).toBe(theirs.getId())
    expect(legacySize(scriptSigs.map((s) => s.length), outputs)).toBe(theirs.virtualSize())
    inputs.forEach((_, i) => {
      const prevScript = Buffer.concat([Buffer.from("76a914", "hex"), randomBytes(20), Buffer.from("88ac", "hex")])
      expect(sighashAll(inputs, outputs, i, prevScript).toString("hex")).toBe(Buffer.from(theirs.hashForSignature(i, prevScript, Transaction.SIGHASH_ALL)).toString("hex"))
    })
  })
})
