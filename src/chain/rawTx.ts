// A legacy (non-witness) transaction's bytes, its txid and the SIGHASH_ALL digest of an input,
// written straight into one buffer (issue 22: "a lean raw-transaction serializer"). bitcoinjs'
// Transaction serialises through its own writer and hashes with a pure-JavaScript SHA-256; for a
// settlement leg (one or two P2PKH inputs, three outputs) that was about 100 µs of the 200 µs a
// leg cost to build, the signature being the rest. Only what the builder makes is covered: version
// 2, every sequence 0xffffffff, locktime 0, no witness. txBuilder.test.ts checks the bytes against
// bitcoinjs' own PSBT signer.
import { createHash } from "node:crypto"

export interface RawInput {
  /** The previous transaction's id as displayed (big-endian hex). */
  readonly txid: string
  readonly vout: number
}

export interface RawOutput {
  readonly script: Uint8Array
  readonly value: bigint
}

const VERSION = 2
const SEQUENCE_FINAL = 0xffffffff
const SIGHASH_ALL = 1

const varIntSize = (n: number): number => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9)

const writeVarInt = (buf: Buffer, at: number, n: number): number => {
  if (n < 0xfd) return buf.writeUInt8(n, at)
  if (n <= 0xffff) {
    buf.writeUInt8(0xfd, at)
    return buf.writeUInt16LE(n, at + 1)
  }
  buf.writeUInt8(0xfe, at)
  return buf.writeUInt32LE(n, at + 1)
}

/** Serialized size with these scriptSig lengths (= vsize for a transaction without witness). */
export const legacySize = (inputScriptLengths: ReadonlyArray<number>, outputs: ReadonlyArray<RawOutput>): number => {
  let size = 4 + varIntSize(inputScriptLengths.length) + varIntSize(outputs.length) + 4
  for (const len of inputScriptLengths) size += 32 + 4 + varIntSize(len) + len + 4
  for (const o of outputs) size += 8 + varIntSize(o.script.length) + o.script.length
  return size
}

/** The transaction's bytes with these scriptSigs (one per input, in order). */
export const serialize = (inputs: ReadonlyArray<RawInput>, scriptSigs: ReadonlyArray<Uint8Array>, outputs: ReadonlyArray<RawOutput>): Buffer => {
  const buf = Buffer.allocUnsafe(legacySize(scriptSigs.map((s) => s.length), outputs))
  let at = buf.writeUInt32LE(VERSION, 0)
  at = writeVarInt(buf, at, inputs.length)
  for (const [i, input] of inputs.entries()) {
    // The outpoint's hash is the txid's bytes in internal (little-endian) order.
    at += Buffer.from(input.txid, "hex").reverse().copy(buf, at)
    at = buf.writeUInt32LE(input.vout, at)
    const script = scriptSigs[i]!
    at = writeVarInt(buf, at, script.length)
    at += Buffer.from(script.buffer, script.byteOffset, script.length).copy(buf, at)
    at = buf.writeUInt32LE(SEQUENCE_FINAL, at)
  }
  at = writeVarInt(buf, at, outputs.length)
  for (const o of outputs) {
    at = buf.writeBigUInt64LE(o.value, at)
    at = writeVarInt(buf, at, o.script.length)
    at += Buffer.from(o.script.buffer, o.script.byteOffset, o.script.length).copy(buf, at)
  }
  buf.writeUInt32LE(0, at)
  return buf
}

const sha256 = (data: Uint8Array): Buffer => createHash("sha256").update(data).digest()
export const hash256 = (data: Uint8Array): Buffer => sha256(sha256(data))

/** The displayed txid of serialized bytes. */
export const txidOf = (bytes: Uint8Array): string => hash256(bytes).reverse().toString("hex")

/**
 * The legacy SIGHASH_ALL digest of input `index`: the transaction with that input's scriptSig
 * replaced by the spent output's script and every other one empty, then the hash type, hashed
 * twice (the original algorithm; no OP_CODESEPARATOR in a P2PKH script).
 */
export const sighashAll = (inputs: ReadonlyArray<RawInput>, outputs: ReadonlyArray<RawOutput>, index: number, prevScript: Uint8Array): Buffer => {
  const empty = new Uint8Array(0)
  const body = serialize(inputs, inputs.map((_, i) => (i === index ? prevScript : empty)), outputs)
  const withType = Buffer.allocUnsafe(body.length + 4)
  body.copy(withType, 0)
  withType.writeUInt32LE(SIGHASH_ALL, body.length)
  return hash256(withType)
}
