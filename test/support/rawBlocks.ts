// Serialized blocks for tests of block readers: built with bitcoinjs, so its parse is the
// reference the lean reader is checked against. Not valid proof of work; nothing here checks it.
import { Block, Transaction } from "bitcoinjs-lib"

/** A coinbase with a witness (the reserved value, as in every segwit block) and a 0x6a output. */
export const coinbaseTx = (height: number): Transaction => {
  const tx = new Transaction()
  tx.addInput(Buffer.alloc(32), 0xffffffff, 0xffffffff, Buffer.from([0x01, height & 0xff]))
  tx.setWitness(0, [Buffer.alloc(32)])
  tx.addOutput(Buffer.from([0x76, 0xa9, 0x14, ...Buffer.alloc(20, height), 0x88, 0xac]), 5_000_000_000n)
  tx.addOutput(Buffer.concat([Buffer.from([0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed]), Buffer.alloc(32, 7)]), 0n)
  return tx
}

/** A legacy spend with `ins` inputs and an output script of `scriptBytes` (≥ 253 takes a 3-byte length). */
export const legacyTx = (n: number, ins = 1, scriptBytes = 25): Transaction => {
  const tx = new Transaction()
  for (let i = 0; i < ins; i++) tx.addInput(Buffer.alloc(32, (n + i) & 0xff), i, 0xfffffffe, Buffer.alloc(107, n & 0xff))
  tx.addOutput(Buffer.alloc(scriptBytes, 0x51), BigInt(1_000 + n))
  tx.locktime = n
  return tx
}

/** A segwit spend whose inputs carry witness stacks of several items (one input with none). */
export const segwitTx = (n: number): Transaction => {
  const tx = new Transaction()
  tx.addInput(Buffer.alloc(32, n & 0xff), 0)
  tx.addInput(Buffer.alloc(32, (n + 1) & 0xff), 1)
  tx.addOutput(Buffer.from([0x00, 0x14, ...Buffer.alloc(20, n & 0xff)]), 20_000n)
  tx.setWitness(0, [Buffer.alloc(72, 1), Buffer.alloc(33, 2), Buffer.alloc(300, 3)])
  tx.setWitness(1, [])
  return tx
}

/** A block after `prevHash` (display hex) holding `txs`, the coinbase first. */
export const blockOf = (prevHash: string, time: number, txs: ReadonlyArray<Transaction>): Block => {
  const b = new Block()
  b.version = 0x20000000
  b.prevHash = Buffer.from(prevHash, "hex").reverse()
  b.timestamp = time
  b.bits = 0x207fffff
  b.nonce = time & 0xffff
  b.transactions = [...txs]
  b.merkleRoot = Block.calculateMerkleRoot(b.transactions)
  return b
}
