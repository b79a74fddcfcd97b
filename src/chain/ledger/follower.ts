// Follows a UtxoLedger's blocks into a consumer that applies blocks one by one and can undo
// them (the Omni indexer, a confirmation tracker). Reorgs are found by hash: when the ledger's
// next block does not build on the consumer's tip, or the consumer's tip block is no longer the
// ledger's block at that height, the consumer rolls back one block at a time until they agree.
import { Effect, Either, Schedule, Schema } from "effect"
import { ledgerLimits, type LedgerBlock, type LedgerInvalidInput, type LedgerRpcError, type UtxoLedgerShape } from "./UtxoLedger.ts"

export interface BlockConsumer {
  /** The last applied block, undefined before the first. */
  tip(): { readonly height: number; readonly hash: string } | undefined
  /** A refusal is any tagged error; the follower reports its `message` as a FollowerError. */
  apply(block: LedgerBlock): Either.Either<unknown, { readonly message: string }>
  /** Undoes the tip block. */
  rollback(): Either.Either<unknown, { readonly message: string }>
}

export interface FollowOptions {
  /** First height to apply when the consumer has no tip; default 0 (genesis). */
  readonly startHeight?: number
  /** Blocks per ledger call, ≤ ledgerLimits.blocksPageMax. */
  readonly pageSize?: number
  /** Blocks one sync may roll back before it gives up (deeper than the consumer's undo window is fatal anyway). */
  readonly rollbackMax?: number
  /** Blocks one sync may apply; the next sync continues. Bounds the work per call. */
  readonly applyMax?: number
}

export interface SyncReport {
  readonly applied: number
  readonly rolledBack: number
  readonly tip: { readonly height: number; readonly hash: string } | undefined
  /** False when `applyMax` stopped the sync before the ledger's tip. */
  readonly caughtUp: boolean
}

/** The consumer refused a block or a rollback, or the reorg was deeper than allowed. */
export class FollowerError extends Schema.TaggedError<FollowerError>()("FollowerError", {
  height: Schema.Number,
  message: Schema.String
}) {}

export const followerDefaults = { pageSize: 50, rollbackMax: 100, applyMax: 10_000, pollMs: 1_000 } as const

/** Brings the consumer to the ledger's tip once, rolling back across any reorg. */
export const syncOnce = (
  ledger: UtxoLedgerShape,
  consumer: BlockConsumer,
  options: FollowOptions = {}
): Effect.Effect<SyncReport, FollowerError | LedgerInvalidInput | LedgerRpcError> =>
  Effect.gen(function* () {
    const pageSize = Math.min(options.pageSize ?? followerDefaults.pageSize, ledgerLimits.blocksPageMax)
    const rollbackMax = options.rollbackMax ?? followerDefaults.rollbackMax
    const applyMax = options.applyMax ?? followerDefaults.applyMax
    let applied = 0
    let rolledBack = 0

    const rollback = (height: number) =>
      Effect.gen(function* () {
        if (rolledBack >= rollbackMax) return yield* Effect.fail(new FollowerError({ height, message: `reorg deeper than ${rollbackMax} blocks` }))
        const r = consumer.rollback()
        if (Either.isLeft(r)) return yield* Effect.fail(new FollowerError({ height, message: r.left.message }))
        rolledBack++
      })

    for (;;) {
      const tip = consumer.tip()
      const from = tip === undefined ? options.startHeight ?? 0 : tip.height + 1
      const page = yield* ledger.blocks(from, pageSize)
      if (tip !== undefined) {
        const first = page.blocks[0]
        if (first !== undefined && first.prevHash !== tip.hash) { yield* rollback(tip.height); continue }
        if (first === undefined) {
          // Nothing new: still check that our tip is the ledger's block (a same-height or shorter reorg).
          const here = yield* ledger.blocks(tip.height, 1)
          if (here.blocks[0]?.hash !== tip.hash) { yield* rollback(tip.height); continue }
          return { applied, rolledBack, tip, caughtUp: true }
        }
      }
      let prevHash = tip?.hash
      for (const block of page.blocks) {
        // A reorg between two pages (or inside one) shows up as a broken link: stop and re-check.
        if (prevHash !== undefined && block.prevHash !== prevHash) break
        const r = consumer.apply(block)
        if (Either.isLeft(r)) return yield* Effect.fail(new FollowerError({ height: block.height, message: r.left.message }))
        prevHash = block.hash
        applied++
        if (applied >= applyMax) return { applied, rolledBack, tip: consumer.tip(), caughtUp: false }
      }
      if (page.blocks.length === 0) return { applied, rolledBack, tip: consumer.tip(), caughtUp: true }
    }
  })

/** Syncs every `pollMs` forever (fork it); a failed round is retried on the next tick. */
export const follow = (
  ledger: UtxoLedgerShape,
  consumer: BlockConsumer,
  options: FollowOptions & { readonly pollMs?: number; readonly onSync?: (report: SyncReport) => void } = {}
): Effect.Effect<never> =>
  syncOnce(ledger, consumer, options).pipe(
    Effect.tap((report) => Effect.sync(() => options.onSync?.(report))),
    Effect.catchAll((e) => Effect.logWarning("chain follower", e)),
    Effect.repeat(Schedule.spaced(options.pollMs ?? followerDefaults.pollMs)),
    Effect.zipRight(Effect.never)
  )
