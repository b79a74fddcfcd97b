// A serialized block (getblock <hash> 0) read as the port's block without building objects for
// its transactions: the header's hash, previous hash and time, and each transaction's hex as a
// slice of the block's hex. bitcoinjs' Block.fromHex built a Transaction (buffers per input,
// output and script) for every transaction, and the port's `txs` then wrote each back to hex:
// with a block of a few hundred settlement legs a second that was about a tenth of the node's
// allocations in the 20 % cross bench (issue 22). Pure.
import { Either } from "effect"
import { hash256 } from "../../rawTx.ts"

export interface RawBlock {
  /** Display hex (byte-reversed double SHA-256 of the 80-byte header). */
  readonly hash: string
  readonly prevHash: string
  /** Header timestamp, seconds. */
  readonly time: number
  /** Each transaction's serialization (witness included, as bitcoind sends it), in block order. */
  readonly txs: ReadonlyArray<string>
}

const HEADER_BYTES = 80

class Truncated extends Error {}

/** The block's header fields and transactions, or why the bytes are not a block. */
export const splitBlock = (blockHex: string): Either.Either<RawBlock, string> => {
  if (blockHex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(blockHex)) return Either.left("block is not hex")
  // Slices of the block are the transactions' hex: lower case, as bitcoinjs writes it (and the
  // parsed-transaction cache keys it), whatever case the node sent.
  const hex = /[A-F]/.test(blockHex) ? blockHex.toLowerCase() : blockHex
  const b = Buffer.from(hex, "hex")
  if (b.length < HEADER_BYTES + 1) return Either.left(`block of ${b.length} bytes is shorter than a header and a count`)
  let at = HEADER_BYTES
  const need = (n: number) => {
    if (at + n > b.length) throw new Truncated(`block ends inside a transaction (at byte ${at}, ${n} more needed)`)
  }
  const varInt = (): number => {
    need(1)
    const first = b[at]!
    at += 1
    if (first < 0xfd) return first
    if (first === 0xfd) { need(2); const v = b.readUInt16LE(at); at += 2; return v }
    if (first === 0xfe) { need(4); const v = b.readUInt32LE(at); at += 4; return v }
    need(8)
    const v = b.readBigUInt64LE(at)
    at += 8
    // No count or length in a block can be this large; a number past 2^53 would lose precision.
    if (v > BigInt(b.length)) throw new Truncated(`a count of ${v} is larger than the block`)
    return Number(v)
  }
  const skip = (n: number) => { need(n); at += n }
  try {
    const count = varInt()
    const txs: Array<string> = []
    for (let t = 0; t < count; t++) {
      const start = at
      skip(4) // version
      // BIP 144: a zero input count followed by flag 1 marks the witness serialization.
      const witness = at + 1 < b.length && b[at] === 0x00 && b[at + 1] === 0x01
      if (witness) at += 2
      const ins = varInt()
      for (let i = 0; i < ins; i++) { skip(36); skip(varInt()); skip(4) }
      const outs = varInt()
      for (let o = 0; o < outs; o++) { skip(8); skip(varInt()) }
      if (witness) for (let i = 0; i < ins; i++) { const items = varInt(); for (let w = 0; w < items; w++) skip(varInt()) }
      skip(4) // locktime
      txs.push(hex.slice(2 * start, 2 * at))
    }
    if (at !== b.length) return Either.left(`${b.length - at} bytes follow the block's ${count} transactions`)
    const header = b.subarray(0, HEADER_BYTES)
    return Either.right({
      hash: hash256(header).reverse().toString("hex"),
      prevHash: Buffer.from(b.subarray(4, 36)).reverse().toString("hex"),
      time: b.readUInt32LE(68),
      txs
    })
  } catch (e) {
    if (e instanceof Truncated) return Either.left(e.message)
    throw e
  }
}
