// A shard-lock connection that the runner storage replaces is closed, never handed back to the
// pool (src/platform/database/lockSessions.ts). @effect/cluster's SqlRunnerStorage rebuilds its
// lock connection when a lock operation misses its deadline; through a plain pool the old session
// went back to the pool alive, and any advisory lock it still held (an unlock that missed its own
// deadline or was cancelled, an acquire queued behind it) then belonged to an ordinary pooled
// connection that no runner can take it from: chaos seed 1 in CI stalled a desk order, the
// attestor and two posts for 220 s that way. The stall here is a row lock on the runner's
// `cluster_runners` row, which the refresh's first statement (the heartbeat UPDATE) waits on.
import { Runner, RunnerAddress, RunnerStorage, ShardId, ShardingConfig, SqlRunnerStorage } from "@effect/cluster"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import * as LockSessions from "../../src/platform/database/lockSessions.ts"
import * as UnlockBatches from "../../src/platform/database/unlockBatches.ts"
import { eventually } from "../support/chainsOps.ts"

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase("locksessions")
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

const address = RunnerAddress.make("127.0.0.1", 39_999)
const shards = [ShardId.make("default", 1), ShardId.make("default", 2), ShardId.make("default", 3)]

interface Holder {
  readonly pid: number
  readonly locks: number
  readonly state: string
}

/** Backends of `app` and how many advisory locks each holds. */
const holders = async (app: string): Promise<ReadonlyArray<Holder>> =>
  (await db.query<{ pid: number; locks: number; state: string }>(
    `SELECT a.pid, count(l.*) FILTER (WHERE l.locktype = 'advisory' AND l.granted)::int AS locks, coalesce(a.state, '') AS state
     FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid
     WHERE a.application_name = $1 AND a.pid <> pg_backend_pid() GROUP BY a.pid, a.state`,
    [app]
  )).map((r) => ({ pid: Number(r.pid), locks: Number(r.locks), state: r.state }))

/** Runs SqlRunnerStorage over a PgClient (its reserve as given) until the test is done with it. */
const withStorage = async (app: string, lockSessions: boolean, f: (storage: RunnerStorage.RunnerStorage["Type"]) => Promise<void>) => {
  const sharding = ShardingConfig.layer({
    ...ShardingConfig.defaults,
    runnerAddress: Option.some(address),
    shardLockRefreshInterval: Duration.millis(300),
    shardLockExpiration: Duration.millis(3_000)
  })
  const client = PgClient.layer({ url: Redacted.make(db.url), applicationName: app, maxConnections: 4, transformJson: false })
  const storageLayer = Layer.orDie(SqlRunnerStorage.layer).pipe(
    Layer.provide(lockSessions ? LockSessions.layer : Layer.empty),
    Layer.provide(client),
    Layer.provide(sharding)
  )
  const scope = Effect.runSync(Scope.make())
  try {
    const context = await Effect.runPromise(Layer.buildWithScope(storageLayer, scope))
    const storage = Context.get(context, RunnerStorage.RunnerStorage)
    await f(storage)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Acquires the shards, stalls one refresh past its deadline, lets it go; the backends of `app` before and after. */
const stallOnce = async (app: string, storage: RunnerStorage.RunnerStorage["Type"]) => {
  await Effect.runPromise(storage.register(Runner.make({ address, groups: ["default"], weight: 1 }), true))
  const acquired = await Effect.runPromise(storage.acquire(address, shards))
  expect(acquired).toHaveLength(shards.length)
  const lockHolder = await eventually(async () => (await holders(app)).find((h) => h.locks === shards.length), 15_000)
  const stall = new pg.Client({ connectionString: db.url })
  await stall.connect()
  try {
    await stall.query("BEGIN")
    await stall.query("SELECT 1 FROM cluster_runners WHERE address = $1 FOR UPDATE", [`${address.host}:${address.port}`])
    // The refresh misses its deadline (300 ms here): the storage rebuilds its lock connection.
    const refreshed = await Effect.runPromise(Effect.either(storage.refresh(address, shards)))
    expect(refreshed._tag).toBe("Left")
  } finally {
    await stall.query("COMMIT")
    await stall.end()
  }
  // The storage takes its shards again on a new lock connection.
  const again = await eventually(async () => {
    const got = await Effect.runPromise(Effect.either(storage.acquire(address, shards)))
    return got._tag === "Right" && got.right.length === shards.length ? got.right : undefined
  }, 15_000)
  expect(again).toHaveLength(shards.length)
  await new Promise((r) => setTimeout(r, 1_000))
  return { old: lockHolder, after: await holders(app) }
}

describe("the runner storage's shard-lock connection", () => {
  it("is closed when the storage replaces it: the old session, and any lock it held, are gone", async () => {
    const app = `locksessions-${process.pid}`
    await withStorage(app, true, async (storage) => {
      const { old, after } = await stallOnce(app, storage)
      expect(after.map((h) => h.pid)).not.toContain(old.pid)
      // One session holds the shards: the new lock connection.
      expect(after.filter((h) => h.locks > 0).map((h) => h.locks)).toEqual([shards.length])
    })
  }, 60_000)

  it("through a plain pool, the replaced session stays open in the pool (what lockSessions.ts prevents)", async () => {
    const app = `locksessions-plain-${process.pid}`
    await withStorage(app, false, async (storage) => {
      const { old, after } = await stallOnce(app, storage)
      expect(after.find((h) => h.pid === old.pid)?.state).toBe("idle")
    })
  }, 60_000)

  it("releases a hundred shards, each released on its own as Sharding does, in a handful of statements", async () => {
    const app = `locksessions-batch-${process.pid}`
    const many = Array.from({ length: 150 }, (_, i) => ShardId.make("default", i + 1))
    await withStorage(app, true, async (storage) => {
      await Effect.runPromise(storage.register(Runner.make({ address, groups: ["default"], weight: 1 }), true))
      expect(await Effect.runPromise(storage.acquire(address, many))).toHaveLength(many.length)
      const before = { ...UnlockBatches.counts }
      // Sharding releases each shard in a fiber of its own (Sharding.ts, releaseShard).
      await Effect.runPromise(Effect.forEach(many.slice(0, 100), (id) => storage.release(address, id), { concurrency: "unbounded", discard: true }))
      const served = UnlockBatches.counts.served - before.served
      const statements = UnlockBatches.counts.statements - before.statements
      // Two statements per release, all through the queue; one by one they would be 200 round trips.
      expect(served).toBe(200)
      expect(statements).toBeLessThanOrEqual(10)
      expect((await holders(app)).filter((h) => h.locks > 0).map((h) => h.locks)).toEqual([50])
      // The released shards are free: another session takes them.
      const other = new pg.Client({ connectionString: db.url })
      await other.connect()
      try {
        const took = await other.query<{ n: number }>(
          "SELECT count(*) FILTER (WHERE pg_try_advisory_lock(n))::int AS n FROM generate_series(1000001, 1000100) AS n"
        )
        expect(took.rows[0]!.n).toBe(100)
      } finally {
        await other.end()
      }
      // The storage still answers for the rest.
      expect(await Effect.runPromise(storage.refresh(address, many.slice(100)))).toHaveLength(50)
    })
  }, 60_000)
})
