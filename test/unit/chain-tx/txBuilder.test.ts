import { crypto, script as bscript, Transaction } from "bitcoinjs-lib"
import * as ecc from "tiny-secp256k1"
import { describe, expect, it } from "vitest"
import { encodeAddress } from "../../../src/chain/address.ts"
import type { BuildError } from "../../../src/chain/buildErrors.ts"
import { litecoinRegtestParams } from "../../../src/chain/params.ts"
import { buildOmni, buildSend, buildStamp, signUnchecked, type BuiltTx, type Utxo } from "../../../src/chain/txBuilder.ts"
import { referenceOf } from "../../../src/chain/omni/indexer.ts"
import type { Result } from "../../../src/crypto/result.ts"
import { fund, params, unwrap, wallet } from "./fixtures.ts"

const alice = wallet(1)
const bob = wallet(2)
const carol = wallet(3)
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex")
const isOpReturn = (s: Uint8Array): boolean => s[0] === 0x6a
const errorOf = <A>(r: Result<A, BuildError>): string => (r.ok ? "" : r.error.message)

/** Checks every input's signature against hashForSignature and the prevout's key hash. */
const signaturesVerify = (built: BuiltTx, inputs: ReadonlyArray<Utxo>): boolean => {
  const tx = Transaction.fromHex(built.hex)
  return tx.ins.every((input, i) => {
    const chunks = bscript.decompile(input.script)
    if (chunks === null || chunks.length !== 2) return false
    const [sig, pubkey] = chunks as [Uint8Array, Uint8Array]
    const { signature, hashType } = bscript.signature.decode(sig)
    const prevScript = inputs[i]!.script
    if (hex(crypto.hash160(pubkey)) !== hex(prevScript.subarray(3, 23))) return false
    const hash = tx.hashForSignature(i, prevScript, hashType)
    return hashType === Transaction.SIGHASH_ALL && ecc.verify(hash, pubkey, signature)
  })
}

const outputsOf = (built: BuiltTx) => Transaction.fromHex(built.hex).outs

describe("buildSend", () => {
  it("pays the output, returns change last and charges vsize × rate", () => {
    const { utxos } = fund(alice.script, [100_000n, 50_000n])
    for (const rate of [1n, 7n]) {
      const built = unwrap(buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address: bob.address, value: 60_000n }], changeAddress: carol.address, feeRateSatPerVb: rate }))
      const outs = outputsOf(built)
      expect(outs).toHaveLength(2)
      expect(hex(outs[0]!.script)).toBe(hex(bob.script))
      expect(outs[0]!.value).toBe(60_000n)
      expect(hex(outs[1]!.script)).toBe(hex(carol.script))
      expect(outs[1]!.value).toBe(150_000n - 60_000n - built.fee)
      expect(built.vsize).toBe(Transaction.fromHex(built.hex).virtualSize())
      // Low-R signatures are almost always the estimated 71 bytes: at most one byte short per input.
      expect(built.fee >= BigInt(built.vsize) * rate).toBe(true)
      expect(built.fee <= BigInt(built.vsize + utxos.length) * rate).toBe(true)
      expect(built.txid).toBe(Transaction.fromHex(built.hex).getId())
      expect(signaturesVerify(built, utxos)).toBe(true)
    }
  })

  it("folds change below dust into the fee, and keeps change at exactly dust", () => {
    const { utxos } = fund(alice.script, [100_000n])
    // 4 version + 1 + 147 per input + 1 + 34 per P2PKH output + 4 locktime, at 1 sat/vB
    const noChangeFee = 191n
    const withChangeFee = 225n
    const folded = unwrap(buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address: bob.address, value: 100_000n - noChangeFee - 5_000n }], changeAddress: alice.address }))
    expect(outputsOf(folded)).toHaveLength(1)
    expect(folded.fee).toBe(noChangeFee + 5_000n)
    const kept = unwrap(buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address: bob.address, value: 100_000n - withChangeFee - params.dustSats }], changeAddress: alice.address }))
    expect(outputsOf(kept).map((o) => o.value)).toEqual([100_000n - withChangeFee - params.dustSats, params.dustSats])
    expect(kept.fee).toBe(withChangeFee)
  })

  it("refuses outputs below dust, accepts exactly dust", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const at = (value: bigint) => buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address: bob.address, value }], changeAddress: alice.address })
    expect(errorOf(at(params.dustSats - 1n))).toMatch(/below the dust threshold of 5460/)
    expect(at(params.dustSats).ok).toBe(true)
  })

  it("refuses an output above the int64 maximum as data; bitcoinjs would throw on it", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const at = (value: bigint) => buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address: bob.address, value }], changeAddress: alice.address })
    const int64Max = (1n << 63n) - 1n
    for (const value of [int64Max + 1n, (1n << 64n) - 1n, 1n << 64n]) {
      expect(at(value)).toEqual({
        ok: false,
        error: { _tag: "OutputValueTooLarge", index: 0, value, limit: int64Max, message: `output 0 pays ${value} sats, more than a 64-bit amount` }
      })
    }
    // The largest amount passes this check and is refused only for want of funds.
    expect(at(int64Max)).toMatchObject({ ok: false, error: { _tag: "InsufficientFunds", outputsTotal: int64Max } })
  })

  it("refuses insufficient funds, counting the fee", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const r = buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address: bob.address, value: 100_000n - 190n }], changeAddress: alice.address })
    expect(errorOf(r)).toBe("insufficient funds: inputs total 100000 sats; outputs need 99810 plus a fee of 191 at 1 sat/vB")
    expect(buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address: bob.address, value: 100_000n - 191n }], changeAddress: alice.address }).ok).toBe(true)
  })

  it("validates every address for the given params", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const regtestBob = unwrap(encodeAddress(bob.script.subarray(3, 23), "p2pkh", litecoinRegtestParams))
    const send = (address: string, changeAddress = alice.address) => buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address, value: 10_000n }], changeAddress })
    expect(errorOf(send(regtestBob))).toMatch(/^output 0 address .*version byte 0x6f is not a ledger address/)
    expect(errorOf(send("tok1qw508d6qejxtdg4y5r3zarvary0c5xw7kxxxxxx"))).toMatch(/bech32/)
    expect(errorOf(send(bob.address, "T-not-an-address"))).toMatch(/^change address/)
    // The same keys work on litecoind regtest with its own address format.
    const regtestAlice = unwrap(encodeAddress(alice.script.subarray(3, 23), "p2pkh", litecoinRegtestParams))
    expect(buildSend(litecoinRegtestParams, { inputs: utxos, signer: alice, outputs: [{ address: regtestBob, value: 10_000n }], changeAddress: regtestAlice }).ok).toBe(true)
  })

  it("spends only the signer's outputs and checks them against the previous transaction", () => {
    const { utxos } = fund(bob.script, [100_000n])
    const mine = fund(alice.script, [100_000n]).utxos
    const send = (inputs: Utxo[]) => buildSend(params, { inputs, signer: alice, outputs: [{ address: bob.address, value: 10_000n }], changeAddress: alice.address })
    expect(errorOf(send(utxos))).toMatch(/not paid to the signer's P2PKH script/)
    expect(errorOf(send([{ ...mine[0]!, value: 200_000n }]))).toMatch(/differ from the previous transaction's output/)
    expect(errorOf(send([mine[0]!, mine[0]!]))).toMatch(/a second time/)
    expect(errorOf(send([]))).toMatch(/no inputs/)
    expect(errorOf(buildSend(params, { inputs: mine, signer: alice, outputs: [{ address: bob.address, value: 10_000n }], changeAddress: alice.address, feeRateSatPerVb: 0n }))).toMatch(/below the minimum relay rate/)
    expect(errorOf(buildSend(params, { inputs: mine, signer: { privateKey: new Uint8Array(32) }, outputs: [{ address: bob.address, value: 10_000n }], changeAddress: alice.address }))).toMatch(/invalid signer key/)
  })

  it("a tampered transaction no longer verifies (the check can fail)", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const built = unwrap(buildSend(params, { inputs: utxos, signer: alice, outputs: [{ address: bob.address, value: 10_000n }], changeAddress: alice.address }))
    const tx = Transaction.fromHex(built.hex)
    tx.outs[0]!.value += 1n
    expect(signaturesVerify({ ...built, hex: tx.toHex() }, utxos)).toBe(false)
  })
})

describe("buildStamp", () => {
  it("carries 80 bytes in one OP_RETURN at vout0 and refuses 81 with a clear message", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const ok = unwrap(buildStamp(params, { inputs: utxos, signer: alice, data: new Uint8Array(80).fill(0x43), changeAddress: alice.address }))
    const outs = outputsOf(ok)
    expect(outs.filter((o) => isOpReturn(o.script))).toHaveLength(1)
    expect(isOpReturn(outs[0]!.script)).toBe(true)
    expect(outs[0]!.value).toBe(0n)
    expect(hex(outs[1]!.script)).toBe(hex(alice.script))
    expect(signaturesVerify(ok, utxos)).toBe(true)
    const r = buildStamp(params, { inputs: utxos, signer: alice, data: new Uint8Array(81), changeAddress: alice.address })
    expect(r).toEqual({ ok: false, error: { _tag: "OpReturnTooLarge", size: 81, limit: 80, message: "OP_RETURN data is 81 bytes; the limit is 80" } })
  })
})

describe("buildOmni", () => {
  const send31 = { type: "simpleSend", property: 31, amount: 2_500_000_000n } as const

  it("orders outputs for the reference rule: OP_RETURN, change to the sender, reference at dust", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const built = unwrap(buildOmni(params, { inputs: utxos, signer: alice, payload: send31, reference: bob.address, changeAddress: alice.address }))
    const outs = outputsOf(built)
    expect(outs).toHaveLength(3)
    expect(hex(outs[0]!.script)).toBe("6a146f6d6e69000000000000001f000000009502f900")
    expect(hex(outs[1]!.script)).toBe(hex(alice.script))
    expect(hex(outs[2]!.script)).toBe(hex(bob.script))
    expect(outs[2]!.value).toBe(params.dustSats)
    expect(outs.filter((o) => isOpReturn(o.script))).toHaveLength(1)
    expect(referenceOf([alice.address, bob.address], alice.address)).toBe(bob.address)
    expect(signaturesVerify(built, utxos)).toBe(true)
  })

  it("a reference equal to the sender still resolves to the sender; change elsewhere is fine with a reference", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const self = unwrap(buildOmni(params, { inputs: utxos, signer: alice, payload: send31, reference: alice.address, changeAddress: alice.address }))
    expect(outputsOf(self).map((o) => hex(o.script)).slice(1)).toEqual([hex(alice.script), hex(alice.script)])
    expect(referenceOf([alice.address, alice.address], alice.address)).toBe(alice.address)
    const elsewhere = unwrap(buildOmni(params, { inputs: utxos, signer: alice, payload: send31, reference: bob.address, changeAddress: carol.address }))
    expect(referenceOf([carol.address, bob.address], alice.address)).toBe(bob.address)
    expect(outputsOf(elsewhere).map((o) => hex(o.script)).slice(1)).toEqual([hex(carol.script), hex(bob.script)])
  })

  it("without a reference, change must return to the sender", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const r = buildOmni(params, { inputs: utxos, signer: alice, payload: send31, changeAddress: bob.address })
    expect(errorOf(r)).toMatch(/must send its change to the sender T/)
    const ok = unwrap(buildOmni(params, { inputs: utxos, signer: alice, payload: send31, changeAddress: alice.address }))
    expect(outputsOf(ok)).toHaveLength(2)
  })

  it("refuses a payload that does not encode or does not fit", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const base = { inputs: utxos, signer: alice, changeAddress: alice.address }
    expect(errorOf(buildOmni(params, { ...base, payload: { ...send31, amount: 0n } }))).toMatch(/amount 0/)
    const long = { type: "createManaged", ecosystem: 1, divisible: true, previousPropertyId: 0, category: "", subcategory: "", name: "x".repeat(62), url: "", data: "" } as const
    // 4 marker + 11 fixed + 5 NULs + 62 = 82 bytes of data
    expect(errorOf(buildOmni(params, { ...base, payload: long }))).toBe("OP_RETURN data is 82 bytes; the limit is 80")
    expect(buildOmni(params, { ...base, payload: { ...long, name: "x".repeat(60) } }).ok).toBe(true)
  })
})

describe("signUnchecked", () => {
  it("signs exactly the given outputs, for ledger policy tests", () => {
    const { utxos } = fund(alice.script, [100_000n])
    const signed = unwrap(signUnchecked(params, utxos, [{ script: bob.script, value: 546n }], alice))
    const outs = Transaction.fromHex(signed.hex).outs
    expect(outs.map((o) => o.value)).toEqual([546n])
    expect(signaturesVerify({ hex: signed.hex, txid: signed.txid, fee: 0n, vsize: 0 }, utxos)).toBe(true)
  })
})
