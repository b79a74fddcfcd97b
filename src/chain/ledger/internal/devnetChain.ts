// The devnet's chain state machine: blocks, UTXO set, mempool and policy, with no timers and no
// I/O (devnet.ts adds the clock, fault injection and the Effect port). Real bitcoinjs
// Transaction and Block objects, so txids and block hashes are the real double-SHA256 ones; no
// proof of work and deterministic timestamps. Every P2PKH input is checked: hash160 of the pushed
// key against the prevout, ECDSA over hashForSignature, low-S as bitcoind's policy requires.
import { Block, crypto, script as bscript, Transaction } from "bitcoinjs-lib"
import { Either } from "effect"
import * as ecc from "tiny-secp256k1"
import type { UtxoChainParams } from "../../params.ts"
import type { BlocksPage, LedgerBlock, LedgerTip, LedgerTx, LedgerUtxo, RejectCode, TestAcceptResult } from "../UtxoLedger.ts"
import { bytesHex, isNullData, isP2pkh, isP2sh, nullDataBytes, outpointKey, parseTx, displayHex } from "./scripts.ts"

export interface DevnetChainOptions {
  readonly params: UtxoChainParams
  /** Coinbase subsidy at height 1, satoshis (litecoind regtest: 50 coins). */
  readonly subsidySats: bigint
  /** Blocks between halvings; 0 never halves (litecoind regtest: 150). */
  readonly halvingInterval: number
  /** Header time of the genesis block, seconds; block h is `genesisTime + h × blockSpacingSeconds`. */
  readonly genesisTime: number
  readonly blockSpacingSeconds: number
  /** Transactions the mempool holds before it refuses with `mempool-full`. */
  readonly mempoolTxMax: number
  /** Non-coinbase transactions per mined block; the rest wait for the next block. */
  readonly blockTxMax: number
}

interface Coin {
  readonly txid: string
  readonly vout: number
  readonly value: bigint
  readonly script: Uint8Array
  readonly height: number
  readonly coinbase: boolean
}

/**
 * A connected block keeps its transactions as hex only: parsed Transaction objects would double
 * what every block costs the heap for the node's lifetime, and only a reorg needs them again.
 */
interface StoredBlock {
  readonly height: number
  readonly hash: string
  readonly prevHash: string
  readonly time: number
  readonly hexes: ReadonlyArray<string>
  /** Coins this block spent, restored when it is disconnected. */
  readonly undo: ReadonlyArray<Coin>
}

/** A block just made, before it is connected. */
interface NewBlock extends Omit<StoredBlock, "undo"> {
  readonly txs: ReadonlyArray<Transaction>
}

interface MempoolEntry {
  readonly tx: Transaction
  readonly hex: string
  readonly fee: bigint
  readonly vsize: number
}

export type AcceptOutcome =
  | { readonly ok: true; readonly txid: string; readonly vsize: number; readonly fee: bigint; readonly inMempool: boolean }
  | { readonly ok: false; readonly txid: string; readonly code: RejectCode; readonly reason: string }

export interface ReorgOutcome {
  readonly disconnected: ReadonlyArray<string>
  readonly connected: ReadonlyArray<string>
  /** Transactions of the orphaned blocks (and earlier mempool) that are back in the mempool. */
  readonly requeued: ReadonlyArray<string>
  /** Transactions that did not survive: dropped on purpose or no longer valid. */
  readonly dropped: ReadonlyArray<string>
}

const ZERO_HASH = new Uint8Array(32)
const REGTEST_BITS = 0x207fffff
const SIGHASH_BASE_TYPES = new Set([Transaction.SIGHASH_ALL, Transaction.SIGHASH_NONE, Transaction.SIGHASH_SINGLE])

const reject = (txid: string, code: RejectCode, reason: string): AcceptOutcome => ({ ok: false, txid, code, reason })

export class DevnetChain {
  private readonly chain: Array<StoredBlock> = []
  private readonly coins = new Map<string, Coin>()
  private readonly confirmed = new Map<string, { readonly height: number; readonly hex: string }>()
  private readonly mempool = new Map<string, MempoolEntry>()
  /** outpoint → txid of the mempool transaction spending it. */
  private readonly mempoolSpends = new Map<string, string>()
  /** Makes every coinbase (and header) unique, even for a replacement block at the same height. */
  private minted = 0

  constructor(readonly options: DevnetChainOptions) {
    this.connect(this.makeBlock(Uint8Array.of(0x6a), []))
  }

  get params(): UtxoChainParams { return this.options.params }

  tip(): LedgerTip {
    const b = this.chain[this.chain.length - 1]!
    return { height: b.height, hash: b.hash }
  }

  get height(): number { return this.chain.length - 1 }

  subsidyAt(height: number): bigint {
    const { subsidySats, halvingInterval } = this.options
    if (halvingInterval <= 0) return subsidySats
    const halvings = Math.floor(height / halvingInterval)
    return halvings >= 64 ? 0n : subsidySats >> BigInt(halvings)
  }

  mempoolTxids(): ReadonlyArray<string> { return [...this.mempool.keys()] }

  // -------------------------------------------------------------------------------------------
  // Mempool

  /** Policy and consensus checks; inserts into the mempool unless `dryRun`. */
  accept(hex: string, dryRun: boolean): AcceptOutcome {
    const parsed = parseTx(hex)
    if (Either.isLeft(parsed)) return reject("", "invalid", parsed.left.message)
    const tx = parsed.right
    const txid = tx.getId()
    if (this.mempool.has(txid)) {
      const e = this.mempool.get(txid)!
      return dryRun ? reject(txid, "already-known", "txn-already-in-mempool") : { ok: true, txid, vsize: e.vsize, fee: e.fee, inMempool: true }
    }
    if (this.confirmed.has(txid)) return reject(txid, "already-known", "transaction already in block chain")
    const shape = this.checkShape(tx, txid)
    if (shape !== undefined) return shape
    const inputs = this.checkInputs(tx, txid)
    if (!inputs.ok) return inputs.outcome
    const outSum = tx.outs.reduce((n, o) => n + o.value, 0n)
    if (inputs.sum < outSum) return reject(txid, "invalid", `bad-txns-in-belowout: inputs ${inputs.sum} < outputs ${outSum}`)
    const fee = inputs.sum - outSum
    const vsize = tx.virtualSize()
    const minFee = BigInt(vsize) * this.params.minFeeRateSatPerVb
    if (fee < minFee) return reject(txid, "fee-too-low", `min relay fee not met, ${fee} < ${minFee}`)
    const sigs = this.checkSignatures(tx, inputs.prevouts)
    if (sigs !== undefined) return reject(txid, "bad-signature", sigs)
    if (dryRun) return { ok: true, txid, vsize, fee, inMempool: false }
    if (this.mempool.size >= this.options.mempoolTxMax) return reject(txid, "mempool-full", `mempool holds ${this.options.mempoolTxMax} transactions`)
    this.mempool.set(txid, { tx, hex, fee, vsize })
    for (const i of tx.ins) this.mempoolSpends.set(outpointKey(displayHex(i.hash), i.index), txid)
    return { ok: true, txid, vsize, fee, inMempool: true }
  }

  /** CheckTransaction and IsStandardTx: structure and output scripts. */
  private checkShape(tx: Transaction, txid: string): AcceptOutcome | undefined {
    if (tx.ins.length === 0) return reject(txid, "invalid", "bad-txns-vin-empty")
    if (tx.outs.length === 0) return reject(txid, "invalid", "bad-txns-vout-empty")
    if (tx.isCoinbase() || tx.ins.some((i) => i.hash.every((b) => b === 0))) return reject(txid, "invalid", "coinbase transactions are not relayed")
    if (tx.version < 1 || tx.version > 2) return reject(txid, "invalid", "version")
    const seen = new Set<string>()
    for (const i of tx.ins) {
      const key = outpointKey(displayHex(i.hash), i.index)
      if (seen.has(key)) return reject(txid, "invalid", "bad-txns-inputs-duplicate")
      seen.add(key)
      if (!bscript.isPushOnly(bscript.decompile(i.script) ?? [0x6a])) return reject(txid, "invalid", "scriptsig-not-pushonly")
    }
    let dataOutputs = 0
    for (const o of tx.outs) {
      if (isNullData(o.script)) {
        const bytes = nullDataBytes(o.script)
        // bitcoind bounds the whole script (OP_RETURN + push opcodes + data) at max + 3 bytes.
        if (bytes === undefined || bytes > this.params.opReturnMaxBytes || o.script.length > this.params.opReturnMaxBytes + 3) {
          return reject(txid, "nonstandard-script", `scriptpubkey: OP_RETURN carries more than ${this.params.opReturnMaxBytes} bytes or is not push-only`)
        }
        dataOutputs++
        continue
      }
      if (!isP2pkh(o.script) && !isP2sh(o.script)) return reject(txid, "nonstandard-script", "scriptpubkey: only P2PKH, P2SH and OP_RETURN outputs are standard here")
      if (o.value < this.params.dustSats) return reject(txid, "dust", `dust: output of ${o.value} sat is below ${this.params.dustSats}`)
    }
    if (dataOutputs > 1) return reject(txid, "multi-op-return", "multi-op-return: at most one OP_RETURN output")
    return undefined
  }

  private lookupCoin(txid: string, vout: number): Coin | undefined {
    const confirmed = this.coins.get(outpointKey(txid, vout))
    if (confirmed !== undefined) return confirmed
    // Chains of unconfirmed transactions are allowed, as on bitcoind.
    const parent = this.mempool.get(txid)
    const out = parent?.tx.outs[vout]
    if (out === undefined || isNullData(out.script)) return undefined
    return { txid, vout, value: out.value, script: out.script, height: this.height + 1, coinbase: false }
  }

  private checkInputs(tx: Transaction, txid: string): { ok: true; sum: bigint; prevouts: ReadonlyArray<Coin> } | { ok: false; outcome: AcceptOutcome } {
    const prevouts: Array<Coin> = []
    for (const i of tx.ins) {
      const key = outpointKey(displayHex(i.hash), i.index)
      const spender = this.mempoolSpends.get(key)
      if (spender !== undefined) return { ok: false, outcome: reject(txid, "double-spend", `txn-mempool-conflict: ${key} is spent by ${spender}`) }
    }
    for (const i of tx.ins) {
      const coin = this.lookupCoin(displayHex(i.hash), i.index)
      if (coin === undefined) return { ok: false, outcome: reject(txid, "missing-inputs", `missing-inputs: ${outpointKey(displayHex(i.hash), i.index)}`) }
      const depth = this.height + 1 - coin.height
      if (coin.coinbase && depth < this.params.coinbaseMaturity) {
        return { ok: false, outcome: reject(txid, "immature-coinbase", `bad-txns-premature-spend-of-coinbase, tried to spend coinbase at depth ${depth}`) }
      }
      prevouts.push(coin)
    }
    return { ok: true, sum: prevouts.reduce((n, c) => n + c.value, 0n), prevouts }
  }

  /** Undefined when every input is a valid P2PKH spend; else the first failure. */
  private checkSignatures(tx: Transaction, prevouts: ReadonlyArray<Coin>): string | undefined {
    for (const [index, coin] of prevouts.entries()) {
      if (!isP2pkh(coin.script)) return `input ${index}: the devnet only spends P2PKH outputs`
      const chunks = bscript.decompile(tx.ins[index]!.script)
      const [sigChunk, keyChunk] = chunks ?? []
      if (chunks === null || chunks.length !== 2 || !(sigChunk instanceof Uint8Array) || !(keyChunk instanceof Uint8Array)) {
        return `input ${index}: scriptSig is not <signature> <pubkey>`
      }
      if (!ecc.isPoint(keyChunk)) return `input ${index}: not a public key`
      const keyHash = crypto.hash160(keyChunk)
      if (bytesHex(keyHash) !== bytesHex(coin.script.subarray(3, 23))) return `input ${index}: public key does not hash to the prevout's hash160`
      let decoded: { signature: Uint8Array; hashType: number }
      try {
        decoded = bscript.signature.decode(sigChunk)
      } catch (e) {
        return `input ${index}: signature is not strict DER (${e instanceof Error ? e.message : String(e)})`
      }
      if (!SIGHASH_BASE_TYPES.has(decoded.hashType & 0x1f)) return `input ${index}: non-standard sighash type ${decoded.hashType}`
      const hash = tx.hashForSignature(index, coin.script, decoded.hashType)
      // strict = true refuses high-S signatures, as bitcoind's standardness does.
      if (!ecc.verify(hash, keyChunk, decoded.signature, true)) return `input ${index}: mandatory-script-verify-flag-failed (signature does not verify)`
    }
    return undefined
  }

  // -------------------------------------------------------------------------------------------
  // Blocks

  private makeBlock(coinbaseScript: Uint8Array, txs: ReadonlyArray<MempoolEntry>): NewBlock {
    const height = this.chain.length
    const prev = this.chain[height - 1]
    const fees = txs.reduce((n, e) => n + e.fee, 0n)
    this.minted++
    const coinbase = new Transaction()
    coinbase.version = 2
    const extra = new Uint8Array(4)
    new DataView(extra.buffer).setUint32(0, this.minted)
    // BIP-34 height first; the counter keeps a replacement block's coinbase txid distinct.
    coinbase.addInput(ZERO_HASH, 0xffffffff, 0xffffffff, bscript.compile([bscript.number.encode(height), extra]))
    coinbase.addOutput(coinbaseScript, height === 0 ? 0n : this.subsidyAt(height) + fees)
    const all = [coinbase, ...txs.map((e) => e.tx)]
    const block = new Block()
    block.version = 0x20000000
    block.prevHash = prev === undefined ? ZERO_HASH : Uint8Array.from(Buffer.from(prev.hash, "hex").reverse())
    block.merkleRoot = Block.calculateMerkleRoot(all)
    block.timestamp = this.options.genesisTime + height * this.options.blockSpacingSeconds
    block.bits = REGTEST_BITS
    block.nonce = this.minted
    block.transactions = all
    return {
      height,
      hash: block.getId(),
      prevHash: prev?.hash ?? bytesHex(ZERO_HASH),
      time: block.timestamp,
      txs: all,
      hexes: all.map((t) => t.toHex())
    }
  }

  private connect(block: NewBlock): void {
    const undo: Array<Coin> = []
    for (const [position, tx] of block.txs.entries()) {
      const txid = tx.getId()
      if (position > 0) {
        for (const i of tx.ins) {
          const key = outpointKey(displayHex(i.hash), i.index)
          const coin = this.coins.get(key)
          // Invariant: mined transactions were accepted against this UTXO set.
          if (coin === undefined) throw new Error(`devnet invariant: block ${block.height} spends missing ${key}`)
          undo.push(coin)
          this.coins.delete(key)
          this.mempoolSpends.delete(key)
        }
        this.mempool.delete(txid)
      }
      tx.outs.forEach((o, vout) => {
        if (!isNullData(o.script)) this.coins.set(outpointKey(txid, vout), { txid, vout, value: o.value, script: o.script, height: block.height, coinbase: position === 0 })
      })
      this.confirmed.set(txid, { height: block.height, hex: block.hexes[position]! })
    }
    // Listed field by field: a spread of a rest object gave every stored block a hidden class of
    // its own in V8 (~0.7 KB of shape data per block).
    this.chain.push({ height: block.height, hash: block.hash, prevHash: block.prevHash, time: block.time, hexes: block.hexes, undo })
  }

  /** Mines `n` blocks: mempool transactions in arrival order (parents before children). */
  mine(n: number, coinbaseScript: Uint8Array): ReadonlyArray<string> {
    const hashes: Array<string> = []
    for (let k = 0; k < n; k++) {
      const txs = [...this.mempool.values()].slice(0, this.options.blockTxMax)
      const block = this.makeBlock(coinbaseScript, txs)
      this.connect(block)
      hashes.push(block.hash)
    }
    return hashes
  }

  /**
   * Mines one block of exactly these mempool transactions, in this order, as bitcoind's
   * `generateblock` with a transaction list does: a miner may put independent transactions in any
   * order it likes. Refused (the reason; nothing mined) when one is not in the mempool or spends
   * an output that is neither unspent before the block nor made earlier in it. The rest of the
   * mempool stays, less what the block made invalid.
   */
  mineExact(txids: ReadonlyArray<string>, coinbaseScript: Uint8Array): { readonly ok: true; readonly hash: string } | { readonly ok: false; readonly reason: string } {
    const entries: Array<MempoolEntry> = []
    const made = new Set<string>()
    const spent = new Set<string>()
    for (const txid of txids) {
      const entry = this.mempool.get(txid)
      if (entry === undefined) return { ok: false, reason: `${txid} is not in the mempool` }
      for (const i of entry.tx.ins) {
        const key = outpointKey(displayHex(i.hash), i.index)
        if (spent.has(key) || (!this.coins.has(key) && !made.has(key))) return { ok: false, reason: `bad-txns-inputs-missingorspent: ${txid} spends ${key}` }
        spent.add(key)
      }
      entry.tx.outs.forEach((o, vout) => { if (!isNullData(o.script)) made.add(outpointKey(txid, vout)) })
      entries.push(entry)
    }
    const chosen = new Set(txids)
    const rest = [...this.mempool.values()].filter((e) => !chosen.has(e.tx.getId()))
    this.mempool.clear()
    this.mempoolSpends.clear()
    const block = this.makeBlock(coinbaseScript, entries)
    this.connect(block)
    for (const e of rest) this.accept(e.hex, false)
    return { ok: true, hash: block.hash }
  }

  /** Takes the tip block off; its non-coinbase transactions are returned, the UTXO set restored. */
  private disconnectTip(): { hash: string; txs: ReadonlyArray<MempoolEntry> } {
    const block = this.chain.pop()!
    const parsed = block.hexes.map((hex) => Transaction.fromHex(hex))
    for (const tx of [...parsed].reverse()) {
      const txid = tx.getId()
      tx.outs.forEach((_, vout) => this.coins.delete(outpointKey(txid, vout)))
      this.confirmed.delete(txid)
    }
    // The undo data lists every coin the block spent, including outputs of its own earlier
    // transactions (a chain inside one block): those did not exist before the block and stay gone.
    const created = new Set(parsed.map((tx) => tx.getId()))
    for (const coin of block.undo) if (!created.has(coin.txid)) this.coins.set(outpointKey(coin.txid, coin.vout), coin)
    const txs = parsed.slice(1).map((tx, i) => ({ tx, hex: block.hexes[i + 1]!, fee: 0n, vsize: tx.virtualSize() }))
    return { hash: block.hash, txs }
  }

  /**
   * Replaces the top `depth` blocks with `replacement` new ones (coinbase to `coinbaseScript`).
   * Orphaned transactions go back to the mempool (and are re-checked) or are dropped; the
   * replacement blocks are mined without them unless `includeMempool`.
   */
  reorg(depth: number, replacement: number, orphaned: "mempool" | "drop", includeMempool: boolean, coinbaseScript: Uint8Array): ReorgOutcome {
    const disconnected: Array<string> = []
    const orphanTxs: Array<MempoolEntry> = []
    for (let k = 0; k < depth; k++) {
      const { hash, txs } = this.disconnectTip()
      disconnected.push(hash)
      orphanTxs.unshift(...txs)
    }
    const previous = [...this.mempool.values()]
    this.mempool.clear()
    this.mempoolSpends.clear()
    const dropped: Array<string> = []
    const requeue = (entries: ReadonlyArray<MempoolEntry>): void => {
      for (const e of entries) {
        const r = this.accept(e.hex, false)
        if (!r.ok) dropped.push(e.tx.getId())
      }
    }
    if (orphaned === "mempool") requeue(orphanTxs)
    else dropped.push(...orphanTxs.map((e) => e.tx.getId()))
    const held = includeMempool ? [] : [...this.mempool.values()]
    if (!includeMempool) { this.mempool.clear(); this.mempoolSpends.clear() }
    const connected: Array<string> = []
    for (let k = 0; k < replacement; k++) connected.push(...this.mine(1, coinbaseScript))
    // Transactions held back go in again after the new blocks, then the older mempool.
    requeue(held)
    requeue(previous)
    return { disconnected, connected, requeued: this.mempoolTxids(), dropped }
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  utxos(scripts: ReadonlyArray<Uint8Array>): ReadonlyArray<LedgerUtxo> {
    const wanted = new Set(scripts.map(bytesHex))
    const tip = this.height
    const out: Array<LedgerUtxo> = []
    for (const c of this.coins.values()) {
      if (!wanted.has(bytesHex(c.script))) continue
      out.push({
        txid: c.txid,
        vout: c.vout,
        value: c.value,
        script: c.script,
        prevTxHex: this.confirmed.get(c.txid)!.hex,
        height: c.height,
        confirmations: tip - c.height + 1,
        coinbase: c.coinbase
      })
    }
    return out.sort((a, b) => a.height - b.height || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout))
  }

  tx(txid: string): LedgerTx | undefined {
    const pending = this.mempool.get(txid)
    if (pending !== undefined) return { txid, hex: pending.hex, confirmations: 0, blockHash: undefined, blockHeight: undefined }
    const c = this.confirmed.get(txid)
    if (c === undefined) return undefined
    return { txid, hex: c.hex, confirmations: this.height - c.height + 1, blockHash: this.chain[c.height]!.hash, blockHeight: c.height }
  }

  blocks(fromHeight: number, limit: number): BlocksPage {
    const page: Array<LedgerBlock> = []
    for (let h = fromHeight; h <= this.height && page.length < limit; h++) {
      const b = this.chain[h]!
      page.push({ height: b.height, hash: b.hash, prevHash: b.prevHash, time: b.time, txs: b.hexes })
    }
    return { blocks: page, nextHeight: fromHeight + page.length, tip: this.tip() }
  }

  /** The mempool as a node's testmempoolaccept would judge a tx: a value, never a throw. */
  testAccept(hex: string): TestAcceptResult {
    const r = this.accept(hex, true)
    return r.ok ? { allowed: true, txid: r.txid, vsize: r.vsize, fee: r.fee } : { allowed: false, txid: r.txid, code: r.code, reason: r.reason }
  }
}
