// Where an order's deposit is on a UTXO chain (the ledger, or a wrap's LTC or BTC), looked at on
// every tick of the order without reading the chain again from the order's start each time.
//
// Why: each look used to read every block from the scan's start to the tip, two RPCs and a parse
// of every transaction per block. An order waits for its deposit (and an expired one watches for a
// late deposit for a day), so the work per tick grew with the chain: on the chaos run's ledger (a
// block a second) an order 8 minutes old read 500 blocks every 3 s, and the desk's ticks fell up
// to 25 minutes behind. Worse, a look never read past its first 500 blocks, so a deposit made
// later than that was never seen.
//
// Now a cursor (one per entity activation) remembers the blocks read, by height and hash, and the
// transactions among them that pay the address. A look reads only the blocks above the cursor,
// checks each one links to the block below (its prevHash), and on a mismatch, or a tip at or below
// the cursor with another hash, steps back a block at a time (a reorg): the candidates in the
// blocks it leaves go with them. The deposit is the first candidate, in chain order, that `accept`
// takes now (an Omni send is judged again on every look, as before). A fresh activation reads from
// the start again, at most SCAN_BLOCKS_MAX blocks a look, and says the look is incomplete until it
// reaches the tip, so an unfinished look never reads as "the deposit is gone".
import { Transaction } from "bitcoinjs-lib"
import { Effect } from "effect"
import type { LedgerBlockNotFound, LedgerInvalidInput, LedgerRpcError, UtxoLedgerShape } from "../../chain/ledger/UtxoLedger.ts"

/** Blocks one look reads at most; the next look goes on from where it stopped. */
export const SCAN_BLOCKS_MAX = 500
/** Block hashes kept below the cursor's top; a reorg deeper than this reads again from the start. */
export const HASHES_KEPT = 200

/** A transaction paying the watched script, in a block the cursor has read. */
export interface Candidate {
  readonly tx: Transaction
  readonly txid: string
  readonly paid: bigint
  readonly height: number
}

/** What one activation has read of the chain for one order. Mutable: it is the activation's own. */
export interface DepositCursor {
  /** The first height the cursor reads (the order's scan start); a change resets it. */
  start: number
  /** The highest height read (start − 1 before any). */
  top: number
  /** Hashes of the blocks read, by height: the top one and up to HASHES_KEPT below it. */
  readonly hashes: Map<number, string>
  /** Candidates in chain order (height, then position in the block). */
  candidates: Array<Candidate>
}

export const newCursor = (): DepositCursor => ({ start: 0, top: -1, hashes: new Map(), candidates: [] })

/** Forgets everything read: the next look reads from `start`. */
export const resetCursor = (cursor: DepositCursor, start: number): void => {
  cursor.start = start
  cursor.top = start - 1
  cursor.hashes.clear()
  cursor.candidates = []
}

/** Takes the cursor's top block off (a reorg replaced it); a top below the kept hashes starts over. */
export const stepBack = (cursor: DepositCursor): void => {
  cursor.hashes.delete(cursor.top)
  cursor.top -= 1
  cursor.candidates = cursor.candidates.filter((c) => c.height <= cursor.top)
  if (cursor.top >= cursor.start && !cursor.hashes.has(cursor.top)) resetCursor(cursor, cursor.start)
}

/** Adds a block read on top of the cursor: its hash, and what in it pays `target`. */
export const pushBlock = (cursor: DepositCursor, block: { readonly height: number; readonly hash: string; readonly txs: ReadonlyArray<string> }, target: Buffer): void => {
  const targetHex = target.toString("hex")
  for (const hex of block.txs) {
    // A cheap look first: most transactions do not carry the script at all.
    if (!hex.includes(targetHex)) continue
    const tx = Transaction.fromHex(hex)
    const paid = tx.outs.filter((o) => target.equals(Buffer.from(o.script))).reduce((n, o) => n + BigInt(o.value), 0n)
    if (paid > 0n) cursor.candidates.push({ tx, txid: tx.getId(), paid, height: block.height })
  }
  cursor.hashes.set(block.height, block.hash)
  cursor.top = block.height
  cursor.hashes.delete(block.height - HASHES_KEPT - 1)
}

/** The cursor's top is not on the chain whose tip is this: above it, or at its height with another hash. */
export const topIsStale = (cursor: DepositCursor, tip: { readonly height: number; readonly hash: string }): boolean =>
  cursor.top >= cursor.start && (cursor.top > tip.height || (cursor.top === tip.height && cursor.hashes.get(cursor.top) !== tip.hash))

/** A block read above the cursor links to its top (if not, the top was reorged away). */
export const linksOnTop = (cursor: DepositCursor, block: { readonly prevHash: string }): boolean =>
  cursor.top < cursor.start || cursor.hashes.get(cursor.top) === block.prevHash

export interface DepositLook<A> {
  /** The cursor reached the tip: `found` undefined means nothing the order takes is on the chain. */
  readonly complete: boolean
  readonly found: { readonly txid: string; readonly amount: A; readonly confirmations: number } | undefined
}

/**
 * One look: reads the blocks above the cursor (at most SCAN_BLOCKS_MAX), stepping back over a
 * reorg, and answers the first candidate `accept` takes, with its confirmations at this tip.
 */
export const lookForDeposit = <A, E, R>(
  chain: Pick<UtxoLedgerShape, "tip" | "blockAt">,
  cursor: DepositCursor,
  /** The first height to read, given the tip's height. */
  startOf: (tipHeight: number) => number,
  target: Buffer,
  accept: (tx: Transaction, paid: bigint) => Effect.Effect<A | undefined, E, R>
): Effect.Effect<DepositLook<A>, E | LedgerRpcError | LedgerInvalidInput, R> =>
  Effect.gen(function*() {
    const tip = yield* chain.tip
    const start = startOf(tip.height)
    if (cursor.start !== start) resetCursor(cursor, start)
    let read = 0
    while (read < SCAN_BLOCKS_MAX) {
      if (topIsStale(cursor, tip)) {
        stepBack(cursor)
        continue
      }
      if (cursor.top >= tip.height) break
      const block = yield* chain.blockAt(cursor.top + 1).pipe(
        Effect.catchTag("LedgerBlockNotFound", (_: LedgerBlockNotFound) => Effect.succeed(undefined))
      )
      // The chain got shorter since its tip was read: the next look goes on.
      if (block === undefined) break
      if (!linksOnTop(cursor, block)) {
        stepBack(cursor)
        continue
      }
      pushBlock(cursor, block, target)
      read += 1
    }
    const complete = cursor.top === tip.height && cursor.hashes.get(tip.height) === tip.hash
    for (const c of cursor.candidates) {
      const amount = yield* accept(c.tx, c.paid)
      if (amount !== undefined) return { complete, found: { txid: c.txid, amount, confirmations: tip.height - c.height + 1 } }
    }
    return { complete, found: undefined }
  })
