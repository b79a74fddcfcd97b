// Our Omni Layer class C indexer: a pure state machine fed with blocks in chain order. It keeps
// the outputs it has seen (to find vin[0]'s prevout, the Omni sender), the managed properties
// and the balances per (address, property), and an undo journal per block so a reorg restores
// the exact previous state. omnicored cannot run here (notes/chains-brief.md §4), so these
// rules are read from the spec and omnicore's tx.cpp/omnicore.cpp; docs/chain-ledger.md lists
// where we differ from Omni Core.
import { Transaction } from "bitcoinjs-lib"
import { Data, Either } from "effect"
import { encodeAddress } from "../address.ts"
import type { UtxoChainParams } from "../params.ts"
import { knownParsed } from "../parsedTx.ts"
import { AMOUNT_MAX, classCPayloadOf, decodeOmniPayload, type Ecosystem, type OmniPayload } from "./codec.ts"

export interface IndexerBlock {
  readonly height: number
  readonly hash: string
  /** Raw transactions, hex, in block order (coinbase first). */
  readonly txs: ReadonlyArray<string>
}

export interface OmniProperty {
  readonly id: number
  readonly ecosystem: Ecosystem
  readonly divisible: boolean
  readonly name: string
  readonly category: string
  readonly subcategory: string
  readonly url: string
  readonly data: string
  /** The sender of the creating transaction; only it may grant (and, here, revoke). */
  readonly issuer: string
  /** Granted minus revoked; never above AMOUNT_MAX. */
  readonly totalTokens: bigint
  readonly txid: string
  readonly height: number
}

export interface OmniTxRecord {
  readonly txid: string
  readonly height: number
  readonly blockHash: string
  /** Position in the block (Omni orders transactions by block, then by this). */
  readonly index: number
  readonly sender?: string
  readonly reference?: string
  readonly payload?: OmniPayload
  readonly valid: boolean
  /** Why the transaction changed nothing; set when `valid` is false. */
  readonly reason?: string
  /** Set on a valid create: the id it was given. */
  readonly propertyId?: number
}

export interface OmniIndexerOptions {
  readonly params: UtxoChainParams
  /** Blocks whose undo logs are kept: the deepest reorg we can follow. */
  readonly maxReorgDepth?: number
  /**
   * Scripts of outputs created before the first applied block (e.g. when following from a
   * snapshot height). Consulted only when the internal output map does not know the outpoint.
   */
  readonly resolvePrevout?: (txid: string, vout: number) => Uint8Array | undefined
}

export const DEFAULT_MAX_REORG_DEPTH = 100
/** Omni numbers managed properties after OMNI (1) and TOMNI (2) in the main ecosystem... */
export const FIRST_MAIN_PROPERTY_ID = 3
/** ...and from 2^31 + 3 in the test ecosystem. */
export const FIRST_TEST_PROPERTY_ID = 2 ** 31 + 3

type Undo =
  | { readonly kind: "balance"; readonly key: string; readonly prev: bigint | undefined }
  | { readonly kind: "output"; readonly key: string; readonly prev: Uint8Array | undefined }
  | { readonly kind: "property"; readonly id: number; readonly prev: OmniProperty | undefined }
  | { readonly kind: "nextId"; readonly ecosystem: Ecosystem; readonly prev: number }

interface AppliedBlock {
  readonly height: number
  readonly hash: string
  readonly undo: Undo[]
  readonly records: ReadonlyArray<OmniTxRecord>
}

/** A block or rollback the indexer refuses; its state is unchanged. `message` is for a person. */
export class OmniIndexerError extends Data.TaggedError("OmniIndexerError")<{ readonly message: string }> {}

type Indexed<A> = Either.Either<A, OmniIndexerError>
const fail = <A>(message: string): Indexed<A> => Either.left(new OmniIndexerError({ message }))
const outpointKey = (txid: string, vout: number): string => `${txid}:${vout}`
const balanceKey = (address: string, property: number): string => `${property}|${address}`

/** Addresses kept by script per indexer (bounded; the same few hundred wallets pay every leg). */
const addressesKept = 4_096

/**
 * The address of a P2PKH or P2SH script; Omni class C allows no other input or reference.
 * Remembered in `known` by the script's bytes: every Omni transaction names three or four
 * addresses, and a base58check encoding (two SHA-256 and a base conversion) each time was 2 % of
 * the node's allocations in the 20 % cross bench (issue 22).
 */
const addressOfScript = (script: Uint8Array, params: UtxoChainParams, known: Map<string, string>): string | undefined => {
  const s = script
  const p2pkh = s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac
  const p2sh = !p2pkh && s.length === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87
  if (!p2pkh && !p2sh) return undefined
  const key = Buffer.from(s.buffer, s.byteOffset, s.length).toString("latin1")
  const kept = known.get(key)
  if (kept !== undefined) return kept
  const address = p2pkh
    ? Either.getOrUndefined(encodeAddress(s.subarray(3, 23), "p2pkh", params))
    : Either.getOrUndefined(encodeAddress(s.subarray(2, 22), "p2sh", params))
  if (address === undefined) return undefined
  if (known.size >= addressesKept) known.clear()
  known.set(key, address)
  return address
}

/**
 * Omni's reference rule for class C: among the address outputs, exactly one → it; more →
 * drop the first one paying the sender (its change) and take the highest vout; none → none.
 */
export const referenceOf = (addressOutputs: ReadonlyArray<string>, sender: string): string | undefined => {
  if (addressOutputs.length <= 1) return addressOutputs[0]
  const change = addressOutputs.indexOf(sender)
  const rest = change < 0 ? addressOutputs : addressOutputs.filter((_, i) => i !== change)
  return rest[rest.length - 1]
}

export class OmniIndexer {
  private readonly params: UtxoChainParams
  private readonly maxReorgDepth: number
  private readonly resolvePrevout: (txid: string, vout: number) => Uint8Array | undefined
  private readonly outputs = new Map<string, Uint8Array>()
  private readonly addresses = new Map<string, string>()
  private readonly balanceMap = new Map<string, bigint>()
  private readonly propertyMap = new Map<number, OmniProperty>()
  private readonly nextId = new Map<Ecosystem, number>([
    [1, FIRST_MAIN_PROPERTY_ID],
    [2, FIRST_TEST_PROPERTY_ID]
  ])
  /** Applied blocks still inside the reorg window, oldest first. */
  private readonly window: AppliedBlock[] = []
  private tipBlock: { height: number; hash: string } | undefined
  /** The newest block that left the window: the tip once every block in the window is undone. */
  private base: { height: number; hash: string } | undefined
  /** The journal of the block being applied. */
  private undo: Undo[] = []

  constructor(options: OmniIndexerOptions) {
    this.params = options.params
    // At least the tip block must stay undoable, or a one-block reorg could not be followed.
    this.maxReorgDepth = Math.max(1, Math.floor(options.maxReorgDepth ?? DEFAULT_MAX_REORG_DEPTH))
    this.resolvePrevout = options.resolvePrevout ?? (() => undefined)
  }

  tip(): { readonly height: number; readonly hash: string } | undefined {
    return this.tipBlock
  }

  balance(address: string, property: number): bigint {
    return this.balanceMap.get(balanceKey(address, property)) ?? 0n
  }

  /** Every non-zero balance, for snapshots and invariant checks. */
  balances(): ReadonlyArray<{ readonly address: string; readonly property: number; readonly amount: bigint }> {
    return [...this.balanceMap.entries()].map(([key, amount]) => {
      const bar = key.indexOf("|")
      return { property: Number(key.slice(0, bar)), address: key.slice(bar + 1), amount }
    })
  }

  property(id: number): OmniProperty | undefined {
    return this.propertyMap.get(id)
  }

  properties(): ReadonlyArray<OmniProperty> {
    return [...this.propertyMap.values()].sort((a, b) => a.id - b.id)
  }

  /** Omni transactions of the blocks still inside the reorg window, oldest first. */
  recentTransactions(): ReadonlyArray<OmniTxRecord> {
    return this.window.flatMap((b) => b.records)
  }

  /**
   * Applies the next block. All its transactions are parsed before any state changes, so a
   * malformed block is refused whole. Returns the block's Omni transactions, valid or not.
   */
  apply(block: IndexerBlock): Indexed<ReadonlyArray<OmniTxRecord>> {
    if (this.tipBlock !== undefined && block.height !== this.tipBlock.height + 1) {
      return fail(`block ${block.hash} is at height ${block.height}; the next block must be at ${this.tipBlock.height + 1}`)
    }
    // Each transaction parsed and hashed once (a leg this process built is already both).
    const txs: Array<{ readonly tx: Transaction; readonly txid: string }> = []
    for (const [i, hex] of block.txs.entries()) {
      try {
        const known = knownParsed(hex)
        if (known !== undefined) txs.push(known)
        else {
          const tx = Transaction.fromHex(hex)
          txs.push({ tx, txid: tx.getId() })
        }
      } catch (e) {
        return fail(`block ${block.height} tx ${i} does not parse: ${e instanceof Error ? e.message : String(e)}`)
      }
    }
    this.undo = []
    const records: OmniTxRecord[] = []
    txs.forEach(({ tx, txid }, index) => {
      const record = this.applyTx(tx, txid, index, block)
      if (record !== undefined) records.push(record)
      this.trackOutputs(tx, txid)
    })
    this.window.push({ height: block.height, hash: block.hash, undo: this.undo, records })
    // Older blocks can no longer be rolled back: their journals go, bounding memory.
    const retired = this.window.length > this.maxReorgDepth ? this.window.shift() : undefined
    if (retired !== undefined) this.base = { height: retired.height, hash: retired.hash }
    this.tipBlock = { height: block.height, hash: block.hash }
    return Either.right(records)
  }

  /** Undoes the tip block, restoring balances, properties and outputs exactly. */
  rollback(): Indexed<{ readonly height: number; readonly hash: string }> {
    const last = this.window.pop()
    if (last === undefined) {
      return fail(this.tipBlock === undefined ? "no block to roll back" : `cannot roll back below ${this.tipBlock.height}: the reorg window is ${this.maxReorgDepth} blocks`)
    }
    for (const u of [...last.undo].reverse()) this.restore(u)
    const previous = this.window[this.window.length - 1]
    this.tipBlock = previous === undefined ? this.base : { height: previous.height, hash: previous.hash }
    return Either.right({ height: last.height, hash: last.hash })
  }

  /** Rolls back until `height` is the tip (a reorg's fork point). */
  rollbackTo(height: number): Indexed<number> {
    if (this.tipBlock === undefined || height >= this.tipBlock.height) return Either.right(0)
    const oldest = this.window[0]
    if (oldest === undefined || height < oldest.height - 1) {
      return fail(`cannot roll back to ${height}: only blocks above ${(oldest?.height ?? this.tipBlock.height + 1) - 1} are in the reorg window`)
    }
    let undone = 0
    while (this.tipBlock !== undefined && this.tipBlock.height > height) {
      const r = this.rollback()
      if (Either.isLeft(r)) return Either.left(r.left)
      undone++
    }
    return Either.right(undone)
  }

  // -------------------------------------------------------------------------------------------
  // Journaled writes: every change records what it replaced.

  private setBalance(address: string, property: number, amount: bigint): void {
    // A broken invariant here means a logic bug; writing a negative balance would be worse.
    if (amount < 0n) throw new Error(`invariant: balance of ${address} in ${property} would be ${amount}`)
    const key = balanceKey(address, property)
    this.undo.push({ kind: "balance", key, prev: this.balanceMap.get(key) })
    if (amount === 0n) this.balanceMap.delete(key)
    else this.balanceMap.set(key, amount)
  }

  private setOutput(key: string, script: Uint8Array | undefined): void {
    this.undo.push({ kind: "output", key, prev: this.outputs.get(key) })
    if (script === undefined) this.outputs.delete(key)
    else this.outputs.set(key, script)
  }

  private setProperty(p: OmniProperty): void {
    this.undo.push({ kind: "property", id: p.id, prev: this.propertyMap.get(p.id) })
    this.propertyMap.set(p.id, p)
  }

  private restore(u: Undo): void {
    const put = <K, V>(m: Map<K, V>, k: K, v: V | undefined): void => {
      if (v === undefined) m.delete(k)
      else m.set(k, v)
    }
    if (u.kind === "balance") put(this.balanceMap, u.key, u.prev)
    else if (u.kind === "output") put(this.outputs, u.key, u.prev)
    else if (u.kind === "property") put(this.propertyMap, u.id, u.prev)
    else this.nextId.set(u.ecosystem, u.prev)
  }

  private trackOutputs(tx: Transaction, txid: string): void {
    if (!tx.isCoinbase()) for (const input of tx.ins) this.setOutput(outpointKey(Buffer.from(input.hash).reverse().toString("hex"), input.index), undefined)
    tx.outs.forEach((o, vout) => {
      // OP_RETURN outputs are unspendable; keeping them would only grow the map.
      if (o.script[0] !== 0x6a) this.setOutput(outpointKey(txid, vout), o.script)
    })
  }

  // -------------------------------------------------------------------------------------------
  // Omni rules

  private prevoutScript(txid: string, vout: number): Uint8Array | undefined {
    return this.outputs.get(outpointKey(txid, vout)) ?? this.resolvePrevout(txid, vout)
  }

  private applyTx(tx: Transaction, txid: string, index: number, block: IndexerBlock): OmniTxRecord | undefined {
    if (tx.isCoinbase()) return undefined
    const payloadBytes = tx.outs.map((o) => classCPayloadOf(o.script)).find((p) => p !== undefined)
    if (payloadBytes === undefined) return undefined
    const base = { txid, height: block.height, blockHash: block.hash, index }
    const invalid = (reason: string, extra: Partial<OmniTxRecord> = {}): OmniTxRecord => ({ ...base, ...extra, valid: false, reason })

    // Sender: vin[0]'s prevout. Omni Core also refuses the tx when any input is not P2PKH/P2SH.
    let sender: string | undefined
    for (const [i, input] of tx.ins.entries()) {
      const prevTxid = Buffer.from(input.hash).reverse().toString("hex")
      const script = this.prevoutScript(prevTxid, input.index)
      if (script === undefined) return invalid(`input ${i} spends ${prevTxid}:${input.index}, an output the indexer has not seen`)
      const address = addressOfScript(script, this.params, this.addresses)
      if (address === undefined) return invalid(`input ${i} is neither P2PKH nor P2SH; class C allows no other input type`)
      if (i === 0) sender = address
    }
    if (sender === undefined) return invalid("transaction has no inputs")
    const addressOutputs = tx.outs.map((o) => addressOfScript(o.script, this.params, this.addresses)).filter((a): a is string => a !== undefined)
    const reference = referenceOf(addressOutputs, sender)
    const who = { sender, ...(reference === undefined ? {} : { reference }) }

    const decoded = decodeOmniPayload(payloadBytes)
    if (Either.isLeft(decoded)) return invalid(`bad payload: ${decoded.left.message}`, who)
    const payload = decoded.right
    const outcome = this.applyPayload(payload, sender, reference, base.txid, block.height)
    return typeof outcome === "string"
      ? invalid(outcome, { ...who, payload })
      : { ...base, ...who, payload, valid: true, ...(outcome.propertyId === undefined ? {} : { propertyId: outcome.propertyId }) }
  }

  /** Applies a decoded payload; a string is the reason it was invalid (nothing changed then). */
  private applyPayload(p: OmniPayload, sender: string, reference: string | undefined, txid: string, height: number): string | { propertyId?: number } {
    if (p.type === "createManaged") {
      if (p.previousPropertyId !== 0) return `previous property id must be 0 for a new property, got ${p.previousPropertyId}`
      if (p.name === "") return "property name must not be empty"
      const id = this.nextId.get(p.ecosystem)!
      this.undo.push({ kind: "nextId", ecosystem: p.ecosystem, prev: id })
      this.nextId.set(p.ecosystem, id + 1)
      const { type: _type, previousPropertyId: _prev, ...fields } = p
      this.setProperty({ ...fields, id, issuer: sender, totalTokens: 0n, txid, height })
      return { propertyId: id }
    }
    if (p.amount < 1n || p.amount > AMOUNT_MAX) return `amount ${p.amount} is out of range (1 to ${AMOUNT_MAX})`
    const property = this.propertyMap.get(p.property)
    if (property === undefined) return `property ${p.property} does not exist`
    const senderBalance = this.balance(sender, p.property)
    switch (p.type) {
      case "simpleSend": {
        if (senderBalance < p.amount) return `sender ${sender} has ${senderBalance} of property ${p.property}, needs ${p.amount}`
        // No reference output: Omni sends to the sender itself.
        const to = reference ?? sender
        this.setBalance(sender, p.property, senderBalance - p.amount)
        this.setBalance(to, p.property, this.balance(to, p.property) + p.amount)
        return {}
      }
      case "grant": {
        if (sender !== property.issuer) return `sender ${sender} is not the issuer of property ${p.property}`
        if (p.amount > AMOUNT_MAX - property.totalTokens) return `granting ${p.amount} would exceed ${AMOUNT_MAX} tokens of property ${p.property}`
        // Omni Core credits the reference (the receiver), or the issuer when there is none.
        const to = reference ?? sender
        this.setBalance(to, p.property, this.balance(to, p.property) + p.amount)
        this.setProperty({ ...property, totalTokens: property.totalTokens + p.amount })
        return {}
      }
      case "revoke": {
        if (sender !== property.issuer) return `sender ${sender} is not the issuer of property ${p.property}`
        if (senderBalance < p.amount) return `issuer ${sender} has ${senderBalance} of property ${p.property}, cannot revoke ${p.amount}`
        this.setBalance(sender, p.property, senderBalance - p.amount)
        this.setProperty({ ...property, totalTokens: property.totalTokens - p.amount })
        return {}
      }
    }
  }
}

