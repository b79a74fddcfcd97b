// One statement for many shard releases. @effect/cluster 0.60's SqlRunnerStorage releases shards
// one by one, each in its own fiber, and each release is two statements on the one lock connection:
// `SELECT pg_advisory_unlock(n)`, then a look in pg_locks for `n`. After a peer comes back a
// hundred shards move at once: two hundred round trips queue on the connection, each waiting for a
// turn of the node's event loop, and the runner's refresh (its heartbeat and its shard locks) waits
// behind all of them. At load 7–11 that queue outlasted the storage's 8 s deadline, which rebuilt
// the session and dropped every lock (chaos seed 5, session 23, run g: six Ticks delivered twice).
//
// So every statement of a lock session goes through one queue, in order, one at a time (a pg
// connection runs one statement at a time anyway), and a run of unlocks waiting at the head of the
// queue goes as one statement, as does a run of pg_locks looks. The caller of each still gets the
// answer its own statement would have given. Statements of other shapes go alone and in order, so
// an unlock never passes the acquire or refresh queued before it.
import type { SqlConnection } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Deferred, Effect, Exit, FiberId, type Scope } from "effect"

/** The library's release statements (SqlRunnerStorage, pg dialect, advisory locks), by shape. */
const unlockShape = /^SELECT pg_advisory_unlock\((\d+)\)$/
const heldShape = /^SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted = true AND pid = pg_backend_pid\(\) AND objid = (\d+)$/

export type Kind = "unlock" | "held" | "other"

/** What a statement is, and its lock number when it is one of the two release statements. */
export const classify = (sql: string, params: ReadonlyArray<unknown>): { readonly kind: Kind; readonly lock: number } => {
  if (params.length === 0) {
    const unlock = unlockShape.exec(sql)
    if (unlock !== null) return { kind: "unlock", lock: Number(unlock[1]) }
    const held = heldShape.exec(sql)
    if (held !== null) return { kind: "held", lock: Number(held[1]) }
  }
  return { kind: "other", lock: 0 }
}

/** One statement for a run of unlocks (each lock once per caller, as the callers' own statements would). */
export const unlockAll = (locks: ReadonlyArray<number>): string =>
  `SELECT pg_advisory_unlock(n) FROM unnest(ARRAY[${locks.join(",")}]::bigint[]) AS t(n)`

/** One statement for a run of pg_locks looks: the lock numbers of `locks` the session still holds. */
export const heldAmong = (locks: ReadonlyArray<number>): string =>
  `SELECT DISTINCT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted = true AND pid = pg_backend_pid() AND objid IN (${
    [...new Set(locks)].join(",")
  })`

interface Waiting {
  readonly kind: Kind
  readonly lock: number
  /** Runs the statement alone ("other" only). */
  readonly alone: Effect.Effect<unknown, SqlError>
  readonly answer: Deferred.Deferred<unknown, SqlError>
  /** Its caller stopped waiting before it was sent: it is not sent. */
  dropped: boolean
}

/** Statements sent and callers served since the process started (what the integration test measures). */
export const counts = { statements: 0, served: 0 }

/** The longest run sent as one statement: a bound on the statement's length. */
export const maxRun = 500

/**
 * `conn`, with every statement queued (see the file's comment). The queue's work runs in `scope`,
 * which must outlive the connection's own: the storage's last statement on a session
 * (`pg_advisory_unlock_all()`) is queued while the session's scope is closing.
 */
export const coalescing = (conn: SqlConnection.Connection, scope: Scope.Scope): SqlConnection.Connection => {
  const queue: Array<Waiting> = []
  let draining = false
  /** The run being sent. */
  let sending: ReadonlyArray<Waiting> = []

  /** The run at the head of the queue: consecutive statements of one release kind, or one statement. */
  const nextRun = (): Array<Waiting> => {
    while (queue.length > 0 && queue[0]!.dropped) queue.shift()
    const head = queue.shift()
    if (head === undefined) return []
    const run = [head]
    if (head.kind === "other") return run
    while (queue.length > 0 && run.length < maxRun && (queue[0]!.kind === head.kind || queue[0]!.dropped)) {
      const next = queue.shift()!
      if (!next.dropped) run.push(next)
    }
    return run
  }

  const send = (run: ReadonlyArray<Waiting>): Effect.Effect<void> => {
    const head = run[0]!
    const locks = run.map((w) => w.lock)
    const statement: Effect.Effect<ReadonlyArray<unknown>, SqlError> = head.kind === "other"
      ? Effect.map(head.alone, (answer) => [answer])
      : head.kind === "unlock"
      ? Effect.as(conn.executeRaw(unlockAll(locks), []), run.map(() => []))
      : Effect.map(conn.executeValues(heldAmong(locks), []), (rows) => {
        const held = new Set(rows.map((row) => Number(row[0])))
        return run.map((w) => (held.has(w.lock) ? [[1]] : []))
      })
    counts.statements++
    sending = run
    return Effect.flatMap(Effect.exit(statement), (exit) =>
      Effect.sync(() => {
        sending = []
        counts.served += run.length
        run.forEach((w, i) =>
          Deferred.unsafeDone(w.answer, Exit.isSuccess(exit) ? Exit.succeed((exit.value as ReadonlyArray<unknown>)[i]) : exit)
        )
      }))
  }

  const drain: Effect.Effect<void> = Effect.suspend(() => {
    const run = nextRun()
    if (run.length === 0) {
      draining = false
      return Effect.void
    }
    return Effect.zipRight(send(run), drain)
  })

  /** The queue's work stopped (its scope closed): nobody is left waiting for an answer that cannot come. */
  const abandon = Effect.sync(() => {
    draining = false
    const closed = new SqlError({ message: "shard locks: the lock session closed before this statement was sent" })
    for (const w of [...sending, ...queue.splice(0)]) Deferred.unsafeDone(w.answer, Exit.fail(closed))
    sending = []
  })

  /**
   * Starts the queue's work unless it runs. Uninterruptible: a caller interrupted between marking
   * the queue as draining and forking its work would leave it marked with nobody draining it. The
   * work itself stays interruptible (a fork inherits the region): its scope closing stops it.
   */
  const start = Effect.uninterruptible(Effect.suspend(() => {
    if (draining) return Effect.void
    draining = true
    return Effect.asVoid(Effect.forkIn(Effect.interruptible(Effect.onInterrupt(drain, () => abandon)), scope))
  }))

  const enqueue = (kind: Kind, lock: number, alone: Effect.Effect<unknown, SqlError>): Effect.Effect<unknown, SqlError> =>
    Effect.suspend(() => {
      const waiting: Waiting = { kind, lock, alone, answer: Deferred.unsafeMake<unknown, SqlError>(FiberId.none), dropped: false }
      queue.push(waiting)
      return Effect.zipRight(
        start,
        Effect.onInterrupt(Deferred.await(waiting.answer), () => Effect.sync(() => { waiting.dropped = true }))
      )
    })

  const queued = <A>(sql: string, params: ReadonlyArray<unknown>, alone: Effect.Effect<A, SqlError>): Effect.Effect<A, SqlError> => {
    const { kind, lock } = classify(sql, params)
    return enqueue(kind, lock, alone) as Effect.Effect<A, SqlError>
  }

  return {
    execute: (sql, params, transformRows) => queued(sql, params, conn.execute(sql, params, transformRows)),
    executeRaw: (sql, params) => queued(sql, params, conn.executeRaw(sql, params)),
    executeValues: (sql, params) => queued(sql, params, conn.executeValues(sql, params)),
    executeUnprepared: (sql, params, transformRows) => queued(sql, params, conn.executeUnprepared(sql, params, transformRows)),
    // Not used on a lock session; a stream cannot wait its turn as one answer.
    executeStream: conn.executeStream
  }
}
