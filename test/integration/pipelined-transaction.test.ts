// A transaction with BEGIN folded into its first statement and COMMIT into its last
// (src/platform/database/pipelinedTransaction.ts), on the real Postgres: values written in as
// literals mean to Postgres what the same values bound as parameters mean; the transaction holds
// its locks from the first round trip to the last; what failed or was interrupted leaves nothing
// behind and gives its connection back clean; and the round trips are the statements, no more.
import { SqlClient, type Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Deferred, Effect, Exit, Fiber, Layer, Redacted, Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { pipelinedTransaction } from "../../src/platform/database/pipelinedTransaction.ts"

let db: TestDatabase
let layer: Layer.Layer<SqlClient.SqlClient>
beforeAll(async () => {
  db = await createTestDatabase("pipelined")
  await db.query("CREATE TABLE pt_rows (id int PRIMARY KEY, note text)")
  await db.query("INSERT INTO pt_rows VALUES (1, 'one')")
  // One connection: a transaction left open or aborted on it would fail whatever runs next.
  layer = Layer.orDie(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1 }))
})
afterAll(async () => { await db?.drop() })

const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provide(effect, layer))

/** A tracer that keeps the round trips' spans: name, parent name and query text. */
const recording = () => {
  const spans: Array<{ name: string; parent: string | undefined; text: string | undefined }> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const attrs = new Map<string, unknown>()
      const entry = { name, parent: parent._tag === "Some" && parent.value._tag === "Span" ? parent.value.name : undefined, text: undefined as string | undefined }
      spans.push(entry)
      return {
        _tag: "Span", name, parent, context, links, kind, sampled: true, traceId: "c".repeat(32), spanId: String(spans.length).padStart(16, "0"),
        status: { _tag: "Started", startTime }, attributes: attrs, end: () => {},
        attribute: (k: string, v: unknown) => {
          attrs.set(k, v)
          if (k === "db.query.text") entry.text = String(v)
        },
        event: () => {}, addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  return { spans, tracer }
}

/** Whether another connection can take row `id`'s lock now (NOWAIT: a held lock is an error at once). */
const lockable = async (id: number) => {
  try {
    await db.query(`BEGIN; SELECT id FROM pt_rows WHERE id = ${id} FOR UPDATE NOWAIT; ROLLBACK`)
    return true
  } catch (e) {
    await db.query("ROLLBACK").catch(() => {})
    if (/could not obtain lock/.test(String(e))) return false
    throw e
  }
}

const hostile = [
  "plain", "", "it's", "''", "a\\b", "\\", "\\'", "\"quoted\"", "{braces}", "a,b", "NULL", "null", "$1", "$$dollar$$",
  "E'x'", "line\nbreak\ttab", "é ü ß 東京 🚀", "'; DROP TABLE pt_rows; --", "\\x00", " lead and trail "
]

describe("pipelined transaction", () => {
  it("literals mean what bound parameters mean: hostile strings, arrays with NULLs, negatives, bigints, booleans", async () => {
    const statement = (sql: SqlClient.SqlClient) => sql<{ v: unknown }>`SELECT json_build_array(
      ${hostile}::text[], ${["1", "-2", "9223372036854775807"]}::bigint[], ${["0.00000001", "-12.5"]}::numeric[],
      ${[...hostile, null]}::text[], ${[]}::text[], ${[true, false]}::boolean[],
      ${-7}::int, ${7 - 10}::int + 1, 5-${-5}::int, ${"9223372036854775807"}::bigint, ${true}::boolean, ${false}::boolean, ${null}::text,
      ${hostile[4]!}::text, ${hostile[17]!}::text
    ) AS v`
    const [bound, literal] = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bound = yield* statement(sql)
      const literal = yield* pipelinedTransaction((tx) => Effect.map(tx.query(statement(sql)), (rows) => ({ value: rows })))
      return [bound, literal] as const
    }))
    expect(literal).toEqual(bound)
    const values = (bound[0]!.v as Array<unknown>)
    expect(values[0]).toEqual(hostile)
    expect(values[3]).toEqual([...hostile, null])
    expect(values.slice(6, 9)).toEqual([-7, -2, 10])
    expect(await db.query("SELECT count(*)::int AS n FROM pt_rows")).toEqual([{ n: 1 }])
  })

  it("sends BEGIN with the first statement and COMMIT with the last: two round trips, the lock held between", async () => {
    const { spans, tracer } = recording()
    let heldBetween: boolean | undefined
    const value = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* pipelinedTransaction((tx) =>
        Effect.gen(function*() {
          const rows = yield* tx.query(sql<{ note: string }>`SELECT note FROM pt_rows WHERE id = ${1} FOR UPDATE`)
          heldBetween = !(yield* Effect.promise(() => lockable(1)))
          return { value: rows[0]!.note, last: sql`UPDATE pt_rows SET note = ${"one, again"} WHERE id = ${1}` }
        })
      )
    }).pipe(Effect.withTracer(tracer)))
    expect(value).toBe("one")
    expect(heldBetween).toBe(true)
    expect(await lockable(1)).toBe(true)
    expect(await db.query("SELECT note FROM pt_rows WHERE id = 1")).toEqual([{ note: "one, again" }])
    const trips = spans.filter((s) => s.name === "sql.execute")
    expect(trips.map((s) => s.parent)).toEqual(["sql.transaction", "sql.transaction"])
    expect(trips[0]!.text).toMatch(/^BEGIN;\nSELECT note FROM pt_rows WHERE id = \$1 FOR UPDATE$/)
    expect(trips[1]!.text).toMatch(/^UPDATE pt_rows SET note = \$1 WHERE id = \$2;\nCOMMIT$/)
    // The spans keep the parameterised text: no value of the statements is in them.
    expect(JSON.stringify(spans)).not.toContain("one, again")
  })

  it("a transaction of one statement is that statement alone: one round trip, no BEGIN", async () => {
    const { spans, tracer } = recording()
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* pipelinedTransaction(() => Effect.succeed({ value: undefined, last: sql`INSERT INTO pt_rows VALUES (${2}, ${"two"})` }))
      // Nothing at all: no statement is sent.
      yield* pipelinedTransaction(() => Effect.succeed({ value: undefined }))
    }).pipe(Effect.withTracer(tracer)))
    expect(spans.filter((s) => s.name === "sql.execute").map((s) => s.text)).toEqual(["INSERT INTO pt_rows VALUES ($1, $2)"])
    expect(await db.query("SELECT note FROM pt_rows WHERE id = 2")).toEqual([{ note: "two" }])
  })

  it("a failed last statement rolls back the statements before it, and the connection comes back clean", async () => {
    const exit = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* Effect.exit(pipelinedTransaction((tx) =>
        Effect.gen(function*() {
          yield* tx.query(sql`INSERT INTO pt_rows VALUES (${3}, ${"three"})`)
          // id 1 exists: the last statement fails, and its COMMIT is never run.
          return { value: undefined, last: sql`INSERT INTO pt_rows VALUES (${1}, ${"dup"})` as Statement.Statement<object> }
        })
      ))
    }))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(Exit.isFailure(exit) ? exit.cause : "")).toMatch(/SqlError/)
    expect(await db.query("SELECT id FROM pt_rows WHERE id = 3")).toEqual([])
    // The one connection of the pool takes the next transaction (an aborted one would refuse it).
    const next = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* pipelinedTransaction((tx) => Effect.map(tx.query(sql<{ n: number }>`SELECT count(*)::int AS n FROM pt_rows`), (r) => ({ value: r[0]!.n })))
    }))
    expect(next).toBe(2)
  })

  it("a body that fails or is interrupted after its first statement rolls back and releases its locks", async () => {
    const failed = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* Effect.exit(pipelinedTransaction((tx) =>
        Effect.gen(function*() {
          yield* tx.query(sql`INSERT INTO pt_rows VALUES (${4}, ${"four"})`)
          return yield* Effect.fail("changed its mind" as const)
        })
      ))
    }))
    expect(failed).toEqual(Exit.fail("changed its mind"))
    expect(await db.query("SELECT id FROM pt_rows WHERE id = 4")).toEqual([])

    let heldWhileWaiting: boolean | undefined
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const locked = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(pipelinedTransaction((tx) =>
        Effect.gen(function*() {
          yield* tx.query(sql`SELECT id FROM pt_rows WHERE id = ${1} FOR UPDATE`)
          yield* tx.query(sql`INSERT INTO pt_rows VALUES (${5}, ${"five"})`)
          yield* Deferred.succeed(locked, undefined)
          return yield* Effect.never
        })
      ))
      yield* Deferred.await(locked)
      heldWhileWaiting = !(yield* Effect.promise(() => lockable(1)))
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
    }))
    expect(heldWhileWaiting).toBe(true)
    expect(await lockable(1)).toBe(true)
    expect(await db.query("SELECT id FROM pt_rows WHERE id = 5")).toEqual([])
    const after = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ idle: boolean }>`SELECT now() = statement_timestamp() AS idle`
    }))
    // Not inside a transaction: now() (the transaction's start) is this statement's own time.
    expect(after).toEqual([{ idle: true }])
  })
})
