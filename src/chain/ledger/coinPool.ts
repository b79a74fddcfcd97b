// The coins of a one-key wallet that spends its own unconfirmed change: a delegated address
// paying many settlement legs per block, the fee sponsor funding many addresses. Pure.
//
// The ledger's UTXO set (`listUnspent`) lists confirmed outputs only, and still lists outputs that
// a mempool transaction spends. So the spendable coins are: the confirmed outputs, plus the
// outputs paying us of our own transactions that are not in a block yet, minus everything our own
// transactions spend. Whether one of our transactions is still unconfirmed needs no ledger call:
// it is if each of its inputs is a confirmed output (spent only in the mempool, so still listed)
// or an output of another of our unconfirmed transactions. A transaction whose inputs are gone
// from the UTXO set is in a block (its outputs are then in the confirmed set if unspent) or can
// never be; either way its outputs are not counted twice and no phantom coin appears.
//
// Each coin carries how many unconfirmed transactions it hangs from (its own included; 0 when
// confirmed), and which of them the pool knows: bitcoind-like mempools refuse a transaction with
// more than 25 unconfirmed ancestors, and one that would give an unconfirmed transaction more
// than 25 descendants (itself included). The second limit bites where a transaction pays us
// several coins: a sponsor's funding of four coins, each the start of a chain of legs, passed 25
// descendants in under a second in the orders bench while no chain had more than 7 ancestors
// (issue 22, session 28). So the pool also counts, for every unconfirmed transaction it knows,
// the ones of ours that descend from it, and a payer stays under both limits. Descendants a payer
// to us made itself (a sponsor spending its own unconfirmed change) are not seen here.
import { Transaction } from "bitcoinjs-lib"
import type { UtxoChainParams } from "../params.ts"
import { parsedTx } from "../parsedTx.ts"
import type { Utxo } from "../txBuilder.ts"
import { spendable, type LedgerUtxo } from "./UtxoLedger.ts"

export interface Coin extends Utxo {
  /** Unconfirmed transactions this coin depends on, its own included; 0 = confirmed. */
  readonly ancestors: number
  /** The txids of those the pool knows (ours, and payments to us it was given); none when confirmed. */
  readonly pending?: ReadonlyArray<string>
}

/** A transaction paying us that someone else signed and that is known to be in the mempool. */
export interface IncomingTx {
  readonly hex: string
  /** Its own unconfirmed ancestors, itself included, when the payer knows it (default 1). */
  readonly ancestors?: number
}

export interface CoinSources {
  /** Our output script. */
  readonly script: Uint8Array
  /** The ledger's confirmed outputs paying `script` (listUnspent). */
  readonly confirmed: ReadonlyArray<LedgerUtxo>
  /** Transactions this key signed, confirmed or not, in any order. */
  readonly own: ReadonlyArray<string>
  readonly incoming?: ReadonlyArray<IncomingTx>
}

/** The coins at most this many inputs a payment spends (a leg rarely needs more than one). */
export const pickInputsMax = 20

export const outpointOf = (u: { readonly txid: string; readonly vout: number }): string => `${u.txid}:${u.vout}`
const txidOfInput = (hash: Uint8Array): string => Buffer.from(hash).reverse().toString("hex")
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i])

interface Parsed {
  readonly txid: string
  readonly hex: string
  readonly tx: Transaction
}

/** Parsed and hashed once per bytes (src/chain/parsedTx.ts): a leg we just built is a lookup. */
const parse = (hex: string): Parsed => {
  const { tx, txid } = parsedTx(hex)
  return { txid, hex, tx }
}

/** Outputs of `p` paying `script`, as coins `ancestors` deep hanging from the unconfirmed `pending`. */
const outputsTo = (p: Parsed, script: Uint8Array, ancestors: number, pending: ReadonlyArray<string>): Coin[] =>
  p.tx.outs.flatMap((o, vout) =>
    sameBytes(o.script, script) ? [{ txid: p.txid, vout, value: o.value, script, prevTxHex: p.hex, ancestors, pending }] : [])

/** Counts a new unconfirmed transaction, hanging from `pending` (its own txid included), as a descendant of each. */
const countDescendant = (descendants: Map<string, number>, txid: string, pending: Iterable<string>): void => {
  for (const a of pending) if (a !== txid) descendants.set(a, (descendants.get(a) ?? 1) + 1)
  descendants.set(txid, 1)
}

/** Our transactions ordered so that each comes after those whose outputs it spends (Kahn). */
const inSpendingOrder = (txs: ReadonlyArray<Parsed>): Parsed[] => {
  const byId = new Map(txs.map((p) => [p.txid, p]))
  const waitingOn = new Map<string, number>()
  const children = new Map<string, string[]>()
  for (const p of byId.values()) {
    const parents = new Set(p.tx.ins.map((i) => txidOfInput(i.hash)).filter((id) => byId.has(id) && id !== p.txid))
    waitingOn.set(p.txid, parents.size)
    for (const parent of parents) children.set(parent, [...(children.get(parent) ?? []), p.txid])
  }
  const ready = [...byId.keys()].filter((id) => waitingOn.get(id) === 0)
  const out: Parsed[] = []
  while (ready.length > 0) {
    const id = ready.pop()!
    out.push(byId.get(id)!)
    for (const child of children.get(id) ?? []) {
      const left = waitingOn.get(child)! - 1
      waitingOn.set(child, left)
      if (left === 0) ready.push(child)
    }
  }
  return out
}

/** `items` ordered so that a transaction comes after the ones whose outputs it spends (to send a chain again). */
export const spendingOrder = <T>(items: ReadonlyArray<T>, hexOf: (item: T) => string): T[] => {
  const parsed = items.map((item) => ({ item, p: parse(hexOf(item)) }))
  const byTxid = new Map(parsed.map((x) => [x.p.txid, x.item]))
  return inSpendingOrder(parsed.map((x) => x.p)).map((p) => byTxid.get(p.txid)!)
}

/** The spendable coins (see the header): confirmed and mature, or change of our unconfirmed transactions. */
export const coinsOf = (sources: CoinSources, params: UtxoChainParams): Coin[] => scan(sources, params).coins

/** A pool of the spendable coins that also knows how many of our transactions descend from each unconfirmed one. */
export const poolOf = (sources: CoinSources, params: UtxoChainParams): CoinPool => {
  const { coins, descendants } = scan(sources, params)
  return new CoinPool(sources.script, coins, descendants)
}

const scan = (sources: CoinSources, params: UtxoChainParams): { coins: Coin[]; descendants: Map<string, number> } => {
  const confirmed = new Map(spendable(sources.confirmed, params).map((u) => [outpointOf(u), u]))
  const listed = new Set(sources.confirmed.map(outpointOf))
  const own = sources.own.map(parse)
  const incoming = (sources.incoming ?? []).map((t) => ({ parsed: parse(t.hex), ancestors: t.ancestors ?? 1 }))
  const spent = new Set(own.flatMap((p) => p.tx.ins.map((i) => `${txidOfInput(i.hash)}:${i.index}`)))

  // Unconfirmed ancestors of every transaction still in the mempool (or not yet sent), as a count
  // and as the txids known here; absent = in a block or dead. And each one's descendants of ours.
  const pending = new Map<string, number>()
  const pendingSets = new Map<string, Set<string>>()
  const descendants = new Map<string, number>()
  for (const t of incoming) {
    if (!t.parsed.tx.outs.some((_, vout) => listed.has(`${t.parsed.txid}:${vout}`))) {
      pending.set(t.parsed.txid, t.ancestors)
      pendingSets.set(t.parsed.txid, new Set([t.parsed.txid]))
      descendants.set(t.parsed.txid, 1)
    }
  }
  for (const p of inSpendingOrder(own)) {
    let ancestors = 1
    let live = true
    const set = new Set([p.txid])
    for (const input of p.tx.ins) {
      const outpoint = `${txidOfInput(input.hash)}:${input.index}`
      if (listed.has(outpoint)) continue
      const parent = pending.get(txidOfInput(input.hash))
      if (parent === undefined) {
        live = false
        break
      }
      ancestors += parent
      for (const a of pendingSets.get(txidOfInput(input.hash))!) set.add(a)
    }
    if (live) {
      pending.set(p.txid, ancestors)
      pendingSets.set(p.txid, set)
      countDescendant(descendants, p.txid, set)
    }
  }

  const coins = new Map<string, Coin>()
  for (const [outpoint, u] of confirmed) {
    coins.set(outpoint, { txid: u.txid, vout: u.vout, value: u.value, script: u.script, prevTxHex: u.prevTxHex, ancestors: 0 })
  }
  for (const p of [...incoming.map((t) => t.parsed), ...own]) {
    const ancestors = pending.get(p.txid)
    if (ancestors === undefined) continue
    for (const c of outputsTo(p, sources.script, ancestors, [...pendingSets.get(p.txid)!])) if (!coins.has(outpointOf(c))) coins.set(outpointOf(c), c)
  }
  for (const outpoint of spent) coins.delete(outpoint)
  return { coins: [...coins.values()], descendants }
}

const byFewestAncestorsThenLargest = (a: Coin, b: Coin) =>
  a.ancestors !== b.ancestors ? a.ancestors - b.ancestors : a.value === b.value ? 0 : a.value > b.value ? -1 : 1

/**
 * A wallet's coins in memory, kept by its one owner between ledger reads: spending takes the
 * inputs out and puts the change in, so the next payment can spend it before any block.
 */
export class CoinPool {
  private readonly coins = new Map<string, Coin>()
  /** For each unconfirmed transaction known here: it and our transactions descending from it. */
  private readonly descendants: Map<string, number>

  constructor(readonly script: Uint8Array, coins: ReadonlyArray<Coin> = [], descendants: ReadonlyMap<string, number> = new Map()) {
    for (const c of coins) this.coins.set(outpointOf(c), c)
    this.descendants = new Map(descendants)
  }

  get size(): number {
    return this.coins.size
  }

  total(): bigint {
    let n = 0n
    for (const c of this.coins.values()) n += c.value
    return n
  }

  /**
   * Coins that may still be spent under a mempool limit of `ancestorsMax` (bitcoind's 25 applies
   * to ancestors and descendants alike): fewer unconfirmed ancestors than that, and none of them
   * with that many descendants already.
   */
  usable(ancestorsMax: number): ReadonlyArray<Coin> {
    return [...this.coins.values()].filter((c) => c.ancestors < ancestorsMax && (c.pending ?? []).every((a) => (this.descendants.get(a) ?? 1) < ancestorsMax))
  }

  /**
   * Inputs covering `need` satoshis plus `feePerInput` for each input taken: one coin when one
   * suffices (the fewest ancestors, then the largest), else the largest ones, at most
   * `pickInputsMax`. Undefined when the usable coins do not cover it.
   */
  pick(need: bigint, feePerInput: bigint, ancestorsMax: number): ReadonlyArray<Coin> | undefined {
    const usable = this.usable(ancestorsMax)
    const single = usable.filter((c) => c.value >= need + feePerInput).sort(byFewestAncestorsThenLargest)[0]
    if (single !== undefined) return [single]
    const largest = [...usable].sort((a, b) => (a.value === b.value ? 0 : a.value > b.value ? -1 : 1)).slice(0, pickInputsMax)
    const chosen: Coin[] = []
    let total = 0n
    for (const c of largest) {
      chosen.push(c)
      total += c.value
      if (total >= need + feePerInput * BigInt(chosen.length)) return chosen
    }
    return undefined
  }

  /** A transaction we signed: its inputs leave the pool, its outputs paying us join it. */
  spend(hex: string): void {
    const p = parse(hex)
    let ancestors = 1
    const pending = new Set([p.txid])
    for (const input of p.tx.ins) {
      const outpoint = `${txidOfInput(input.hash)}:${input.index}`
      const coin = this.coins.get(outpoint)
      ancestors += coin?.ancestors ?? 0
      for (const a of coin?.pending ?? []) pending.add(a)
      this.coins.delete(outpoint)
    }
    countDescendant(this.descendants, p.txid, pending)
    const chain = [...pending]
    for (const c of outputsTo(p, this.script, ancestors, chain)) this.coins.set(outpointOf(c), c)
  }

  /** A transaction paying us that someone else signed (the fee sponsor's funding). */
  receive(hex: string, ancestors = 1): void {
    const p = parse(hex)
    if (!this.descendants.has(p.txid)) this.descendants.set(p.txid, 1)
    for (const c of outputsTo(p, this.script, ancestors, [p.txid])) this.coins.set(outpointOf(c), c)
  }
}
