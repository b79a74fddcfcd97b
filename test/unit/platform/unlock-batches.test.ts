// The lock session's statement queue (src/platform/database/unlockBatches.ts): a run of shard
// releases goes as one statement, each caller still gets its own statement's answer, and nothing
// passes a statement of another shape queued before it.
import type { SqlConnection } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Fiber, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { classify, coalescing, heldAmong, unlockAll } from "../../../src/platform/database/unlockBatches.ts"

const unlock = (n: number) => `SELECT pg_advisory_unlock(${n})`
const held = (n: number) =>
  `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted = true AND pid = pg_backend_pid() AND objid = ${n}`

/** A session that holds `locks`, answers each statement after `ms`, and records what it was sent. */
const fakeSession = (locks: Set<number>, ms: number, fail?: (sql: string) => boolean) => {
  const sent: Array<string> = []
  const answer = (sql: string): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> =>
    Effect.flatMap(Effect.sleep(ms), () =>
      Effect.suspend((): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> => {
        sent.push(sql)
        if (fail?.(sql) === true) return Effect.fail(new SqlError({ message: "boom" }))
        const many = /unnest\(ARRAY\[([\d,]+)\]/.exec(sql)
        if (many !== null) {
          for (const n of many[1]!.split(",").map(Number)) locks.delete(n)
          return Effect.succeed([])
        }
        const among = /objid IN \(([\d,]+)\)/.exec(sql)
        if (among !== null) return Effect.succeed(among[1]!.split(",").map(Number).filter((n) => locks.has(n)).map((n) => [n]))
        return Effect.succeed([[sql]])
      }))
  const conn: SqlConnection.Connection = {
    execute: (sql) => answer(sql),
    executeRaw: (sql) => answer(sql),
    executeValues: (sql) => answer(sql),
    executeUnprepared: (sql) => answer(sql),
    executeStream: () => {
      throw new Error("not used")
    }
  }
  return { conn, sent }
}

/** The library's release of one shard: unlock, then look whether the session still holds it. */
const release = (conn: SqlConnection.Connection, n: number) =>
  Effect.flatMap(conn.executeRaw(unlock(n), []), () => conn.executeValues(held(n), []))

const withScope = <A, E>(f: (scope: Scope.Scope) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flatMap(Scope.make(), (scope) => Effect.ensuring(f(scope), Scope.close(scope, Exit.void))))

describe("lock session statement queue", () => {
  it("recognises exactly the library's two release statements", () => {
    expect(classify(unlock(1000007), [])).toEqual({ kind: "unlock", lock: 1000007 })
    expect(classify(held(2000300), [])).toEqual({ kind: "held", lock: 2000300 })
    expect(classify("SELECT pg_advisory_unlock_all()", []).kind).toBe("other")
    expect(classify(unlock(1), [1]).kind).toBe("other")
    expect(unlockAll([3, 1])).toBe("SELECT pg_advisory_unlock(n) FROM unnest(ARRAY[3,1]::bigint[]) AS t(n)")
    expect(heldAmong([3, 3, 1])).toContain("objid IN (3,1)")
  })

  it("a hundred releases at once take four statements, and each caller learns its own lock is gone", async () => {
    const locks = new Set(Array.from({ length: 150 }, (_, i) => 1_000_001 + i))
    const { conn, sent } = fakeSession(locks, 5)
    const answers = await withScope((scope) => {
      const queued = coalescing(conn, scope)
      return Effect.forEach(Array.from({ length: 100 }, (_, i) => 1_000_001 + i), (n) => release(queued, n), { concurrency: "unbounded" })
    })
    expect(answers.every((rows) => rows.length === 0)).toBe(true)
    expect(locks.size).toBe(50)
    // The first unlock goes alone (the queue was empty); the other 99 wait and go together; the
    // first look goes once its unlock is done, the others together after the second run.
    expect(sent.length).toBeLessThanOrEqual(4)
  })

  it("a lock still held after its unlock is reported to its caller only", async () => {
    const locks = new Set([1_000_001, 1_000_002])
    const { conn } = fakeSession(locks, 1)
    const answers = await withScope((scope) => {
      const queued = coalescing(conn, scope)
      // The second lock is taken twice (a session lock counts): one unlock leaves it held.
      const twice = Effect.flatMap(queued.executeRaw(unlock(1_000_002), []), () => Effect.sync(() => locks.add(1_000_002)))
      return Effect.all([release(queued, 1_000_001), Effect.zipRight(twice, queued.executeValues(held(1_000_002), []))], { concurrency: "unbounded" })
    })
    expect(answers[0]).toEqual([])
    expect(answers[1]).toEqual([[1]])
  })

  it("keeps the order of statements of other shapes: an unlock never passes the acquire before it", async () => {
    const { conn, sent } = fakeSession(new Set([1_000_001, 1_000_002]), 2)
    await withScope((scope) => {
      const queued = coalescing(conn, scope)
      return Effect.all([
        queued.executeRaw(unlock(1_000_001), []),
        queued.executeValues("SELECT objid FROM pg_locks", []),
        queued.executeRaw(unlock(1_000_002), []),
        queued.executeRaw("SELECT pg_advisory_unlock_all()", [])
      ], { concurrency: "unbounded" })
    })
    expect(sent).toEqual([
      unlockAll([1_000_001]),
      "SELECT objid FROM pg_locks",
      unlockAll([1_000_002]),
      "SELECT pg_advisory_unlock_all()"
    ])
  })

  it("a failed run fails each of its callers, and the queue goes on with the next", async () => {
    const { conn } = fakeSession(new Set([1_000_001, 1_000_002, 1_000_003]), 2, (sql) => sql.includes("unnest"))
    const exits = await withScope((scope) => {
      const queued = coalescing(conn, scope)
      return Effect.all([
        Effect.exit(queued.executeRaw("SELECT 1", [])),
        Effect.exit(queued.executeRaw(unlock(1_000_001), [])),
        Effect.exit(queued.executeRaw(unlock(1_000_002), [])),
        Effect.exit(queued.executeRaw("SELECT 2", []))
      ], { concurrency: "unbounded" })
    })
    expect(exits.map(Exit.isSuccess)).toEqual([true, false, false, true])
  })

  it("a caller that stops waiting is not sent; one whose queue's scope closes is told so", async () => {
    const { conn, sent } = fakeSession(new Set([1_000_001, 1_000_002]), 20)
    await withScope((scope) =>
      Effect.gen(function*() {
        const queued = coalescing(conn, scope)
        const first = yield* Effect.fork(queued.executeRaw("SELECT 1", []))
        const second = yield* Effect.fork(queued.executeRaw(unlock(1_000_001), []))
        yield* Effect.sleep(1)
        yield* Fiber.interrupt(second)
        yield* Fiber.join(first)
      })
    )
    expect(sent).toEqual(["SELECT 1"])

    const { conn: slow } = fakeSession(new Set([1]), 10_000)
    const scope = Effect.runSync(Scope.make())
    const queued = coalescing(slow, scope)
    const pending = Effect.runPromise(Effect.exit(queued.executeRaw(unlock(1), [])))
    await new Promise((r) => setTimeout(r, 10))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const exit = await pending
    expect(Exit.isFailure(exit)).toBe(true)
  })
})
