// A reserved connection (the shard-lock connection) given up while it waits for a pool slot must
// not keep the connection it is handed later. (A transaction waits for its connection
// uninterruptibly, so it is not given up; its wait is bounded by the pool's connect timeout.) @effect/sql-pg 0.53's `reserve` had
// no canceller: the pool's callback came after the interruption, the resume went nowhere, and the
// connection never went back. Every such wait took one connection from the pool for good; the
// shard-lock pool (two connections) was empty after two, and its runner held no shard again
// (chaos seed 5, session 23). Fixed in patches/@effect+sql-pg*.patch (postinstall).
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Exit, Fiber, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase("reserveint")
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

describe("sql-pg reserve given up while it waits", () => {
  it("hands the connection it gets later back to the pool", async () => {
    const answered = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* PgClient.make({ url: Redacted.make(db.url), maxConnections: 1, transformJson: false })
      const release = yield* Effect.makeLatch(false)
      const holder = yield* Effect.fork(Effect.scoped(Effect.zipRight(sql.reserve, release.await)))
      yield* Effect.sleep("200 millis")
      const waited = yield* Effect.scoped(sql.reserve).pipe(Effect.timeout("300 millis"), Effect.exit)
      expect(Exit.isFailure(waited)).toBe(true)
      yield* release.open
      yield* Fiber.join(holder)
      return yield* Effect.scoped(Effect.flatMap(sql.reserve, (c) => c.executeValues("SELECT 3", []))).pipe(Effect.timeout(Duration.seconds(5)), Effect.exit)
    })).pipe(Effect.provide(Reactivity.layer)))
    expect(Exit.isSuccess(answered)).toBe(true)
  }, 20_000)
})
