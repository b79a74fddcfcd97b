// A node that should own shards but has held fewer than it should for too long is a zombie: after a database outage of more than a few seconds @effect/cluster's
// shard-lock connection is not taken again (docs/operations.md, "Failure modes"), so its timers and
// messages would wait forever. The watchdog makes that a clean exit (code 1, one line) so a process
// manager restarts the node, instead of an up-but-useless process.
//
// Only the single-runner topology knows how many shards it must hold (all of them); a runner of a
// multi-node cluster shares them, so it is not watched.
import { Data, Deferred, Effect, FiberId } from "effect"

export class ShardsLost extends Data.TaggedError("ShardsLost")<{ readonly message: string }> {}

const lost = Deferred.unsafeMake<never, ShardsLost>(FiberId.none)

/**
 * Fails when the watchdog gave up; `cluster/main.ts` races the node against it and, being the
 * process's owner, forces the exit if stopping hangs. A node run inside another process (the test
 * suite's in-process nodes) only stops: it must never exit its host.
 */
export const shardsLost: Effect.Effect<never, ShardsLost> = Deferred.await(lost)

/** After giving up, a node process stops gracefully, but exits 1 after this long whatever is left. */
export const giveUpExitMs = 15_000

export interface Watch {
  /** The node has held all its shards at least once. Until then it is not watched: a second single
   * runner on the same database (tests do this) gets a share of the shards at most, and is no
   * zombie of an outage. */
  readonly armed: boolean
  /** When the node was first seen short of shards in this stretch; undefined while it holds them all. */
  readonly shortSinceMs: number | undefined
  readonly giveUp: boolean
}

/** Pure: the next watch state from one observation. */
export const observe = (previous: Watch, owned: number, expected: number, nowMs: number, limitMs: number): Watch => {
  if (owned >= expected) return { armed: true, shortSinceMs: undefined, giveUp: false }
  if (!previous.armed) return previous
  const since = previous.shortSinceMs ?? nowMs
  return { armed: true, shortSinceMs: since, giveUp: nowMs - since >= limitMs }
}

/**
 * A single node is the only runner of its database. Another live runner there (a second `npm
 * start`, or two in-process nodes of a test) takes a share of the shards, and a message to an
 * entity on its shards is never delivered: a single node has no runner transport, so the send is
 * retried forever (issue 22). The line the node logs while that lasts; undefined when it is alone.
 */
export const sharedDatabase = (liveRunners: number): string | undefined =>
  liveRunners <= 1
    ? undefined
    : `SHARDLINE_TOPOLOGY=single, but ${liveRunners} runners are live on this database: they split the shards, ` +
      "and a message to an entity on another runner's shards is never delivered (a single node cannot reach its peers); " +
      "several nodes on one database need SHARDLINE_TOPOLOGY=socket"

export const initialWatch: Watch = { armed: false, shortSinceMs: undefined, giveUp: false }

/** Logs the reason and fails `shardsLost` (the node stops). */
export const giveUp = (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`${new Date().toISOString()} shardline: ${message}\n`)
    Deferred.unsafeDone(lost, Effect.fail(new ShardsLost({ message })))
  })
