// The runner storage as Sharding sees it, patient with a slow database round trip. @effect/cluster
// 0.60 gives every shard-lock operation exactly the refresh interval (1 s with our defaults) twice
// over: Sharding times the refresh out and, on a miss, drops every shard and force-interrupts every
// entity ("Shard lock storage is unhealthy"); SqlRunnerStorage times the same operation out and
// rebuilds its lock connection, which releases every lock. On a loaded 2-core box a 1.1 s stall is
// enough (docs/operations.md, "A refresh later than its interval drops every shard"): chaos seed 6
// had a node do it ten times in two minutes, each time delivering the Ticks its entities were
// running again.
//
// The locks are Postgres session advisory locks: they do not expire, they are lost only with their
// session, and a lost session fails its next statement at once. So a refresh that is merely slow
// says nothing new: the locks it asks about are the ones the session held at the last answer. Here
//   - every storage operation runs detached from its caller: a caller that gives up (Sharding's
//     own 1 s timeout) no longer interrupts it, and an interrupted lock statement is what made the
//     storage rebuild its connection;
//   - a refresh is answered at once from what the session is known to hold (the last answers of
//     refresh and acquire, less what was released since); the real one runs behind it, and its
//     answer, or its failure, is what the next refresh sees (one interval later);
//   - the storage itself runs with a longer deadline (`storageDeadlineFactor` intervals), so only
//     a stall that long rebuilds the connection; its runner list keeps the cluster's own heartbeat expiry;
//   - each refresh also writes the runner's heartbeat on the node's own pool, so lock statements
//     queued on the lock connection never age it past the expiry.
// A failure clears what the session is known to hold and fails every refresh until one succeeds,
// so a lost session drops the runner's shards by force as before, one refresh later at most.
import { Runner, RunnerStorage, ShardingConfig, SqlRunnerStorage } from "@effect/cluster"
import type { RunnerAddress } from "@effect/cluster"
import { ShardId } from "@effect/cluster"
import { PersistenceError } from "@effect/cluster/ClusterError"
import { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { type Cause, Duration, Effect, Exit, Fiber, Layer, Option, type Scope } from "effect"
import * as LockSessions from "./lockSessions.ts"

export interface PatientLocksOptions {
  /** A real refresh slower than this is logged. */
  readonly slowRefreshMs: number
  /** The cluster's heartbeat expiry: a runner whose heartbeat is older has left the ring. */
  readonly heartbeatExpiryMs: number
}

/** The shards of `asked` the session holds after a refresh or acquire of `asked` answered `got`. */
export const afterAnswer = (held: ReadonlySet<string>, asked: ReadonlyArray<string>, got: ReadonlyArray<string>): ReadonlySet<string> => {
  const next = new Set(held)
  for (const id of asked) next.delete(id)
  for (const id of got) next.add(id)
  return next
}

/** Wraps a runner storage whose locks live as long as its session (see the file's comment). */
export const patient = (inner: RunnerStorage.RunnerStorage["Type"], sql: SqlClient.SqlClient, scope: Scope.Scope, options: PatientLocksOptions) =>
  Effect.sync(() => {
    let held: ReadonlySet<string> = new Set()
    /** A real refresh is running: the next call answers without starting another. */
    let refreshing = false
    /** The last real refresh failed (this cause): every refresh fails until one succeeds. */
    let broken: Cause.Cause<PersistenceError> | undefined
    /** A heartbeat on the node's pool is running. */
    let beating = false

    /** Runs `op` in the storage's own scope and waits for it; the caller's interruption stops only the wait. */
    const detached = <A>(op: Effect.Effect<A, PersistenceError>) =>
      Effect.flatMap(Effect.forkIn(op, scope), (f) => Fiber.join(f))

    const startRefresh = (address: RunnerAddress.RunnerAddress, asked: ReadonlyArray<ShardId.ShardId>) =>
      Effect.suspend(() => {
        refreshing = true
        const startedMs = Date.now()
        return Effect.forkIn(
          inner.refresh(address, asked).pipe(
            Effect.onExit((exit) =>
              Effect.suspend(() => {
                refreshing = false
                // The storage's scope closing (the node stopping) is no failure of the session.
                if (Exit.isInterrupted(exit)) return Effect.void
                if (Exit.isSuccess(exit)) {
                  held = afterAnswer(held, asked.map(String), exit.value.map(String))
                  broken = undefined
                } else {
                  held = new Set()
                  broken = exit.cause
                }
                // What a reader of a lock episode needs: was the storage slow, or did it fail (and why)?
                const tookMs = Date.now() - startedMs
                if (Exit.isFailure(exit)) return Effect.logWarning(`shard locks: a refresh failed after ${tookMs} ms; refreshes fail until one succeeds`, exit.cause)
                return tookMs > options.slowRefreshMs ? Effect.logWarning(`shard locks: a refresh took ${tookMs} ms`) : Effect.void
              })
            )
          ),
          scope
        )
      })

    /**
     * The shards of `asked` the session is known to hold, then every other shard it holds, as the
     * storage's own refresh answers (it reports every lock of the session). A real refresh asks
     * for the shards of its moment and takes any of them it does not hold: one that runs just
     * after a release takes the released shard back. Sharding releases a shard it finds in an
     * answer but not among its own again; answering only what was asked hid it, and the shard
     * stayed locked by a runner that no longer knew it (cluster-lock-stall.test.ts: the second
     * node of two held 3 of its 150 shards for a minute).
     */
    const answerFor = (asked: ReadonlyArray<ShardId.ShardId>) => {
      const askedKeys = new Set(asked.map(String))
      const others: Array<ShardId.ShardId> = []
      for (const key of held) if (!askedKeys.has(key)) others.push(ShardId.ShardId.fromString(key))
      return [...asked.filter((id) => held.has(String(id))), ...others]
    }

    /**
     * The runner's heartbeat on the node's own pool, beside the one the real refresh makes on the
     * lock connection: that one waits behind every lock statement queued on the connection, and
     * a heartbeat older than the expiry (4 s) takes the runner out of every peer's ring, which
     * moves its shards again. The queue that made this needed (a hundred shards released one by
     * one, two hundred statements) now goes as a few statements (unlockBatches.ts); this write
     * stays as the cover for a lock connection slow for any other reason.
     */
    const heartbeat = (address: RunnerAddress.RunnerAddress) =>
      Effect.suspend(() => {
        if (beating) return Effect.void
        beating = true
        return Effect.forkIn(
          sql`UPDATE cluster_runners SET last_heartbeat = NOW() WHERE address = ${`${address.host}:${address.port}`}`.pipe(
            Effect.timeout(Duration.millis(options.heartbeatExpiryMs)),
            Effect.catchAllCause(() => Effect.void),
            Effect.ensuring(Effect.sync(() => { beating = false }))
          ),
          scope
        )
      })

    /**
     * Answers at once, from what the session is known to hold, and starts the real refresh (unless
     * one is still running); its answer is what the next refresh sees. No timer stands between
     * Sharding's call and the answer, so an event loop that stalls past Sharding's 1 s deadline no
     * longer drops every shard (chaos seed 5, session 23: "Shard lock storage is unhealthy" right
     * after a 1.5 s stall, when a 500 ms wait and the 1 s deadline fired in the same turn of the
     * loop). A real refresh that failed (the session lost, a statement past the storage's deadline,
     * which rebuilds the session and so drops its locks) fails every refresh until one succeeds:
     * Sharding then marks the storage unhealthy and interrupts its entities, as it must when the
     * locks are gone, and its probe finds the storage back.
     */
    const refresh = (address: RunnerAddress.RunnerAddress, shardIds: Iterable<ShardId.ShardId>) =>
      Effect.suspend(() => {
        const asked = Array.from(shardIds)
        const start = refreshing ? Effect.void : Effect.asVoid(startRefresh(address, asked))
        const now = Effect.zipRight(heartbeat(address), start)
        if (broken !== undefined) return Effect.zipRight(now, Effect.failCause(broken))
        const answer = answerFor(asked)
        return Effect.as(now, answer)
      })

    const service: RunnerStorage.RunnerStorage["Type"] = {
      ...inner,
      getRunners: Effect.suspend(() =>
        sql<{ runner: string; healthy: boolean }>`SELECT runner, healthy FROM cluster_runners
          WHERE last_heartbeat > NOW() - make_interval(secs => ${Math.ceil(options.heartbeatExpiryMs / 1000)})`).pipe(
        Effect.map((rows) => {
          const out: Array<[Runner.Runner, boolean]> = []
          for (const r of rows) {
            const runner = Option.getOrUndefined(Option.liftThrowable(Runner.Runner.decodeSync)(r.runner))
            if (runner !== undefined) out.push([runner, Boolean(r.healthy)])
          }
          return out
        }),
        Effect.mapError((cause) => new PersistenceError({ cause }))
      ),
      // The bookkeeping is the operation's own, not its caller's: Sharding giving up on a slow
      // acquire (its 1 s timeout) must not clear what the session holds while the acquire goes on.
      acquire: (address, shardIds) =>
        detached(inner.acquire(address, Array.from(shardIds)).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              if (Exit.isSuccess(exit)) held = afterAnswer(held, [], exit.value.map(String))
              else held = new Set()
            })
          )
        )),
      refresh,
      // A shard being released is no longer counted as held, whatever becomes of the release.
      release: (address, shardId) =>
        Effect.zipRight(Effect.sync(() => { held = afterAnswer(held, [String(shardId)], []) }), detached(inner.release(address, shardId))),
      releaseAll: (address) => Effect.zipRight(Effect.sync(() => { held = new Set() }), detached(inner.releaseAll(address)))
    }
    return service
  })

/**
 * The storage's own lock-operation deadline, as a multiple of the cluster's refresh interval. Past
 * it the storage rebuilds its lock session, which drops every lock, so it must outlast the queue
 * that forms on the one lock connection when a hundred shards are released one by one (two
 * statements each) on a loaded box: at 3 s (session 22) chaos seed 5 had every refresh fail behind
 * such a queue, every failure rebuild the session, and every rebuild release and re-take the
 * shards, for the rest of the run (session 23). A lost session still fails its next statement at once.
 */
export const storageDeadlineFactor = 8

/**
 * RunnerStorage for Sharding: SqlRunnerStorage over lock sessions (lockSessions.ts) with a
 * deadline `storageDeadlineFactor` times the refresh interval, wrapped by `patient`.
 */
export const layer = (sharding: ShardingConfig.ShardingConfig["Type"]): Layer.Layer<RunnerStorage.RunnerStorage, never, PgClient.PgClient | SqlClient.SqlClient> => {
  const intervalMs = Duration.toMillis(sharding.shardLockRefreshInterval)
  const expiryMs = Duration.toMillis(sharding.shardLockExpiration)
  const cadenceMs = Math.min(intervalMs, expiryMs / 3)
  const storageMs = cadenceMs * storageDeadlineFactor
  const storageConfig = ShardingConfig.layer({
    ...sharding,
    shardLockRefreshInterval: Duration.millis(storageMs),
    shardLockExpiration: Duration.millis(Math.max(expiryMs, storageMs * 3))
  })
  const inner = Layer.orDie(SqlRunnerStorage.layer).pipe(Layer.provide(LockSessions.layer), Layer.provide(storageConfig))
  return Layer.scoped(RunnerStorage.RunnerStorage, Effect.gen(function*() {
    const storage = yield* RunnerStorage.RunnerStorage
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    return yield* patient(storage, sql, scope, { slowRefreshMs: cadenceMs, heartbeatExpiryMs: expiryMs })
  })).pipe(Layer.provide(inner))
}
