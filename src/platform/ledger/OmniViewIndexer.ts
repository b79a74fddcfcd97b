// The OmniView port (OmniView.ts) over our own indexer: one OmniIndexer per node, fed by the
// ledger follower (syncOnce) in a background fiber every `followPollMs`, and on demand by
// `sync`. One sync runs at a time. Besides balances it keeps the indexer's judgement of every
// Omni transaction it applied (valid or not, and why), dropped again when its block is rolled
// back, so settlement can ask how a confirmed leg was judged.
import { Effect, Either, Layer, Schedule } from "effect"
import { type BlockConsumer, syncOnce } from "../../chain/ledger/follower.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { DEFAULT_MAX_REORG_DEPTH, OmniIndexer, type OmniTxRecord } from "../../chain/omni/indexer.ts"
import { OmniView, OmniViewBehind, type OmniViewShape } from "./OmniView.ts"

/** Pause between two background syncs. */
export const followPollMs = 500
/** Judgements kept (oldest forgotten first): far more than a final depth's worth of legs. */
export const txRecordsMax = 200_000
/** Rounds one `sync` runs before answering (each applies at most the follower's applyMax blocks). */
const syncRoundsMax = 100

export const make = Effect.gen(function*() {
  const ledger = yield* UtxoLedger
  const indexer = new OmniIndexer({ params: ledger.params })
  const records = new Map<string, OmniTxRecord>()
  /** Txids of each applied block inside the indexer's undo window, oldest first. */
  const blockTxids: Array<ReadonlyArray<string>> = []

  const consumer: BlockConsumer = {
    tip: () => indexer.tip(),
    apply: (block) =>
      Either.map(indexer.apply(block), (applied) => {
        for (const r of applied) records.set(r.txid, r)
        blockTxids.push(applied.map((r) => r.txid))
        if (blockTxids.length > DEFAULT_MAX_REORG_DEPTH) blockTxids.shift()
        // Map keeps insertion order: the first keys are the oldest judgements.
        for (const txid of records.keys()) {
          if (records.size <= txRecordsMax) break
          records.delete(txid)
        }
        return applied
      }),
    rollback: () =>
      Either.map(indexer.rollback(), (undone) => {
        for (const txid of blockTxids.pop() ?? []) records.delete(txid)
        return undone
      })
  }

  const height = Effect.sync(() => indexer.tip()?.height ?? -1)
  const lock = yield* Effect.makeSemaphore(1)
  /** Rounds until the ledger's tip (as of each round) is applied; the first failure ends it. */
  const rounds = lock.withPermits(1)(
    Effect.iterate({ caughtUp: false, rounds: 0 }, {
      while: (s) => !s.caughtUp && s.rounds < syncRoundsMax,
      body: (s) => Effect.map(syncOnce(ledger, consumer), (r) => ({ caughtUp: r.caughtUp, rounds: s.rounds + 1 }))
    })
  )
  const sync: OmniViewShape["sync"] = rounds.pipe(
    Effect.catchAll((e) => Effect.logWarning("Omni view: the ledger follower stopped short", e)),
    Effect.zipRight(height)
  )
  // A round that ends caught up has read the ledger's tip after this call began, so every block
  // the ledger had then is applied.
  const current: OmniViewShape["current"] = rounds.pipe(
    Effect.mapError((e) => new OmniViewBehind({ message: `the Omni view could not follow the ledger: ${e.message}` })),
    Effect.filterOrFail((s) => s.caughtUp, () => new OmniViewBehind({ message: `the Omni view is still behind the ledger after ${syncRoundsMax} rounds` })),
    Effect.zipRight(height)
  )

  return OmniView.of({
    balance: (address, property) => Effect.sync(() => indexer.balance(address, property)),
    property: (id) => Effect.sync(() => indexer.property(id)),
    height,
    sync,
    current,
    tx: (txid) => Effect.sync(() => records.get(txid))
  })
})

/** The node's Omni view; follows the ledger in the background for as long as the node runs. */
export const layer = Layer.scoped(OmniView, Effect.gen(function*() {
  const view = yield* make
  yield* Effect.forkScoped(Effect.repeat(view.sync, Schedule.spaced(followPollMs)))
  return view
}))
