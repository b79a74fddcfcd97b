// A miner that orders the mempool against us: it mines one block (the devnet's `mineBlock`, as
// bitcoind's `generateblock` takes a transaction list) where the transactions we want early come
// as early as consensus lets them and the ones we want late as late, parents always before their
// children (a block must be valid). Used to check that the desk's legs cannot be mined before
// what their Omni validity depends on (docs/desk-orders.md, "Reorgs").
import { Transaction } from "bitcoinjs-lib"
import { Effect } from "effect"
import { UtxoDevnet } from "../../src/chain/ledger/devnet.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import type { RunningNode } from "./node.ts"

/**
 * The mempool's order for one block: a transaction's rank is its place in `early` (first is
 * earliest), else `early.length` for the unnamed, else after them for `late`; each transaction
 * takes the smallest rank of itself and its descendants (so a wanted transaction drags its
 * parents along), and the lowest-ranked transaction whose parents are in goes next.
 */
export const adversarialOrder = (mempool: ReadonlyArray<{ readonly txid: string; readonly hex: string }>, early: ReadonlyArray<string>, late: ReadonlyArray<string>): ReadonlyArray<string> => {
  const ids = new Set(mempool.map((t) => t.txid))
  const parents = new Map(mempool.map((t) => [t.txid, new Set(Transaction.fromHex(t.hex).ins
    .map((i) => Buffer.from(i.hash).reverse().toString("hex")).filter((p) => ids.has(p)))] as const))
  const own = (txid: string) => early.includes(txid) ? early.indexOf(txid) : late.includes(txid) ? early.length + 1 + late.indexOf(txid) : early.length
  const rank = new Map(mempool.map((t) => [t.txid, own(t.txid)] as const))
  // Push each rank to the ancestors until nothing changes (the mempool is small).
  for (let changed = true; changed;) {
    changed = false
    for (const [child, ps] of parents) {
      for (const p of ps) {
        if (rank.get(child)! < rank.get(p)!) { rank.set(p, rank.get(child)!); changed = true }
      }
    }
  }
  const order: Array<string> = []
  const placed = new Set<string>()
  while (order.length < mempool.length) {
    const ready = mempool.filter((t) => !placed.has(t.txid) && [...parents.get(t.txid)!].every((p) => placed.has(p)))
    const next = ready.reduce((a, b) => (rank.get(b.txid)! < rank.get(a.txid)! ? b : a))
    order.push(next.txid)
    placed.add(next.txid)
  }
  return order
}

/** Mines the whole mempool in one block in the adversarial order; that order. The node's Omni view has the block after. */
export const mineAdversarially = (node: RunningNode, early: ReadonlyArray<string>, late: ReadonlyArray<string>) =>
  node.run(Effect.gen(function*() {
    const devnet = yield* UtxoDevnet
    const ledger = yield* UtxoLedger
    const mempool = []
    for (const txid of yield* devnet.mempool) mempool.push({ txid, hex: (yield* ledger.getTx(txid)).hex })
    const order = adversarialOrder(mempool, early, late)
    yield* devnet.faults.mineBlock(order)
    yield* (yield* OmniView).sync
    return order
  }))
