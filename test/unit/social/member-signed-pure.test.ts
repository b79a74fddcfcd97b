// The pure part of member-signed stamps (src/social/posts/psbt.ts): a stamp built as a PSBT from
// the xpub side only, signed by the member's key, and the check that a signed transaction is
// exactly the one built, by the right key, SIGHASH_ALL; plus the hosting rule for the new states.
import { randomBytes } from "node:crypto"
import { BIP32Factory } from "bip32"
import { Psbt, Transaction, payments, script as bscript } from "bitcoinjs-lib"
import { Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { describe, expect, it } from "vitest"
import { ledgerParams } from "../../../src/chain/params.ts"
import { hostingAt } from "../../../src/social/posts/hosting.ts"
import { buildUnsignedStamp, postKeyFromXpub, signedTransactionOf, verifySignedStamp } from "../../../src/social/posts/psbt.ts"

const bip32 = BIP32Factory(ecc)
const network = ledgerParams.network
const seed = randomBytes(32)
const account = bip32.fromSeed(seed, network).derivePath("m/44'/696969'/1101'")
const key = Either.getOrThrow(postKeyFromXpub(account.neutered().toBase58(), [7, 0, 0], ledgerParams))
const signer = bip32.fromSeed(seed, network).derivePath("m/44'/696969'/1101'/7/0/0")

/** A funding transaction paying the post address two coins (its input is arbitrary: never checked here). */
const funding = new Transaction()
funding.version = 2
funding.addInput(randomBytes(32), 0)
const coin = ledgerParams.dustSats + 1_000n
funding.addOutput(payments.p2pkh({ address: key.address, network }).output!, coin)
funding.addOutput(payments.p2pkh({ address: key.address, network }).output!, coin)
const opReturn = "CHV1P|bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy|ABC234.1"
const built = Either.getOrThrow(buildUnsignedStamp(ledgerParams, {
  coin: { txid: funding.getId(), vout: 1, value: coin, prevTxHex: funding.toHex() },
  address: key.address, opReturn, pubkey: key.pubkey, fingerprint: key.fingerprint, relativePath: key.relativePath
}))
const signedPsbt = () => Psbt.fromBase64(built.psbtBase64, { network }).signAllInputs(signer).finalizeAllInputs()

describe("member-signed stamp PSBTs", () => {
  it("derives the post key from the xpub as the seed does, and builds a PSBT a wallet signs", () => {
    expect(key.address).toBe(payments.p2pkh({ pubkey: signer.publicKey, network }).address)
    expect(key.relativePath).toBe("m/7/0/0")
    const tx = Either.getOrThrow(signedTransactionOf(signedPsbt().toBase64()))
    expect(Either.isRight(verifySignedStamp(ledgerParams, built.unsignedHex, key.address, tx))).toBe(true)
    expect(tx.outs[1]!.value).toBe(built.changeValue)
    expect(built.changeValue).toBeGreaterThanOrEqual(ledgerParams.dustSats)
    // The same as raw hex.
    expect(Either.isRight(signedTransactionOf(tx.toHex()))).toBe(true)
  })

  it("refuses a coin that does not pay the address, or leaves change below dust", () => {
    const req = { address: key.address, opReturn, pubkey: key.pubkey, fingerprint: key.fingerprint, relativePath: key.relativePath }
    expect(Either.isLeft(buildUnsignedStamp(ledgerParams, { ...req, coin: { txid: funding.getId(), vout: 0, value: coin + 1n, prevTxHex: funding.toHex() } }))).toBe(true)
    const small = new Transaction()
    small.addInput(randomBytes(32), 0)
    small.addOutput(payments.p2pkh({ address: key.address, network }).output!, ledgerParams.dustSats)
    expect(Either.getLeft(buildUnsignedStamp(ledgerParams, { ...req, coin: { txid: small.getId(), vout: 0, value: ledgerParams.dustSats, prevTxHex: small.toHex() } })))
      .toEqual(expect.objectContaining({ _tag: "Some" }))
  })

  it("refuses anything but the exact transaction, signed SIGHASH_ALL by the address's key", () => {
    const good = signedPsbt().extractTransaction()
    const check = (tx: Transaction) => Either.getLeft(verifySignedStamp(ledgerParams, built.unsignedHex, key.address, tx))
    const signAs = (tx: Transaction, hashType: number, k: { publicKey: Uint8Array; sign(h: Uint8Array): Uint8Array } = signer) => {
      const prev = payments.p2pkh({ address: key.address, network }).output!
      tx.setInputScript(0, bscript.compile([bscript.signature.encode(k.sign(tx.hashForSignature(0, prev, hashType)), hashType), k.publicKey]))
      return tx
    }
    const extraOutput = good.clone()
    extraOutput.addOutput(payments.p2pkh({ address: key.address, network }).output!, 1n)
    expect(check(signAs(extraOutput, Transaction.SIGHASH_ALL))._tag).toBe("Some")
    const lessChange = good.clone()
    lessChange.outs[1]!.value -= 100n
    expect(check(signAs(lessChange, Transaction.SIGHASH_ALL))).toEqual(expect.objectContaining({ value: "output 1 differs from the transaction built" }))
    const otherSequence = good.clone()
    otherSequence.ins[0]!.sequence = 0
    expect(check(signAs(otherSequence, Transaction.SIGHASH_ALL))).toEqual(expect.objectContaining({ value: "the input differs from the transaction built" }))
    expect(check(signAs(good.clone(), Transaction.SIGHASH_NONE))).toEqual(expect.objectContaining({ value: "the signature must be SIGHASH_ALL" }))
    expect(check(signAs(good.clone(), Transaction.SIGHASH_ALL, bip32.fromSeed(randomBytes(32), network)))._tag).toBe("Some")
    // The right key's signature over another message (its pubkey, a valid DER, a wrong hash).
    const forged = good.clone()
    const [, pub] = bscript.decompile(good.ins[0]!.script)! as [Uint8Array, Uint8Array]
    const other = good.clone()
    other.locktime = 1
    signAs(other, Transaction.SIGHASH_ALL)
    forged.setInputScript(0, bscript.compile([bscript.decompile(other.ins[0]!.script)![0] as Uint8Array, pub]))
    expect(check(forged)).toEqual(expect.objectContaining({ value: "the signature does not verify (or its S is high)" }))
    expect(Either.isLeft(signedTransactionOf("not base64 nor hex!"))).toBe(true)
    // An unsigned PSBT is not a signed stamp.
    expect(Either.isLeft(signedTransactionOf(built.psbtBase64))).toBe(true)
  })

  it("never schedules hosting for a post still awaiting signatures or unsigned", () => {
    expect(hostingAt({ state: "awaiting_signature", paidUntilMs: 0 }, 1_000, 10)).toEqual({ state: "awaiting_signature", dueAtMs: undefined })
    expect(hostingAt({ state: "unsigned", paidUntilMs: 1e15 }, 1_000, 10)).toEqual({ state: "unsigned", dueAtMs: undefined })
  })
})
