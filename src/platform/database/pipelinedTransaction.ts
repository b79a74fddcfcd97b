// A transaction in as many round trips as it has statements: BEGIN travels with the first
// statement and COMMIT with the last, each pair as one simple-protocol query ("BEGIN; <read>",
// "<write>; COMMIT"), and a transaction of one statement is that statement alone (Postgres runs a
// single statement as its own transaction).
//
// Why: node-postgres sends a statement, waits for its answer, then sends the next; it does not
// pipeline. `sql.withTransaction` is therefore BEGIN, the statements, COMMIT: a market batch with
// places was four round trips. In the orders bench (issue 22) each round trip cost the node about
// 100 µs of socket write and the market's commit loop, busy 99 % of the time, about a millisecond
// of wall time under load. The simple protocol takes no parameters, so the statements' values are
// written in as literals (sqlLiterals.ts); spans keep the parameterised text, never the values.
//
// Statements the body runs through `sql` itself go to other connections, outside the transaction.
import { type SqlError, SqlClient, type Statement } from "@effect/sql"
import { Effect, Exit } from "effect"
import { withSpanIfTraced } from "../telemetry/batchSpan.ts"
import { inlined } from "./sqlLiterals.ts"

/** Statements of one transaction; the first carries BEGIN. */
export interface Pipelined {
  readonly query: <A extends object>(statement: Statement.Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
}

/** What the body decides: its value, and the statement that ends the transaction with COMMIT (if any). */
export interface Ending<A> {
  readonly value: A
  readonly last?: Statement.Statement<object> | undefined
}

interface PgResult {
  readonly rows?: ReadonlyArray<object>
}

/** The rows of the last statement of a (possibly multi-statement) simple query. */
const lastRows = (result: unknown): ReadonlyArray<object> => {
  const last = (Array.isArray(result) ? result[result.length - 1] : result) as PgResult | undefined
  return last?.rows ?? []
}

/**
 * Runs `body` as one transaction with BEGIN and COMMIT folded into its first and last statements.
 * The body is interruptible; the ending round trip is not (as `sql.withTransaction`'s COMMIT is
 * not). On failure or interruption after BEGIN went out, ROLLBACK.
 */
export const pipelinedTransaction = <A, E, R>(body: (tx: Pipelined) => Effect.Effect<Ending<A>, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.scoped(Effect.gen(function*() {
        const conn = yield* sql.reserve
        let begun = false
        const send = (text: string, shown: string) =>
          conn.executeRaw(text, []).pipe(withSpanIfTraced("sql.execute", {
            kind: "client",
            captureStackTrace: false,
            attributes: { "db.system.name": "postgresql", "db.operation.name": "executeRaw", "db.query.text": shown }
          }))
        const compiled = (statement: Statement.Statement<object>) => {
          const [text, params] = statement.compile()
          return { text, sql: inlined(text, params) }
        }
        const tx: Pipelined = {
          query: <A extends object>(statement: Statement.Statement<A>) =>
            Effect.suspend(() => {
              const s = compiled(statement)
              const first = !begun
              // Set before it is sent: a failed first statement may still have opened the transaction.
              begun = true
              return Effect.map(
                first ? send(`BEGIN;\n${s.sql}`, `BEGIN;\n${s.text}`) : send(s.sql, s.text),
                (result) => lastRows(result) as ReadonlyArray<A>
              )
            })
        }
        const rollback = Effect.suspend(() => (begun ? Effect.orDie(conn.executeRaw("ROLLBACK", [])) : Effect.void))
        const exit = yield* Effect.exit(restore(body(tx)))
        if (Exit.isFailure(exit)) {
          yield* rollback
          return yield* Effect.failCause(exit.cause)
        }
        const { last, value } = exit.value
        const ending = last === undefined
          ? (begun ? send("COMMIT", "COMMIT") : Effect.void)
          : Effect.suspend(() => {
            const s = compiled(last)
            return begun ? send(`${s.sql};\nCOMMIT`, `${s.text};\nCOMMIT`) : send(s.sql, s.text)
          })
        // A failed "<write>; COMMIT" stops at the write (the server skips the rest of the query):
        // the transaction is left aborted and is rolled back here.
        yield* Effect.tapErrorCause(ending, () => rollback)
        return value
      }).pipe(withSpanIfTraced("sql.transaction", { kind: "client", captureStackTrace: false })))
    ))
