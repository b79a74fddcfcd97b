// What a lock session is known to hold after each answer of the runner storage
// (src/platform/database/patientLocks.ts): a refresh or acquire answers for the shards it asked
// about, and only for those; what it did not ask about is unchanged.
import { RunnerAddress, type RunnerStorage, ShardId } from "@effect/cluster"
import { PersistenceError } from "@effect/cluster/ClusterError"
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { afterAnswer, patient } from "../../../src/platform/database/patientLocks.ts"

describe("patient shard locks: the held set", () => {
  it("a refresh that lost a shard drops it, keeps the others, and leaves unasked shards alone", () => {
    const held = new Set(["default:1", "default:2", "default:3"])
    expect([...afterAnswer(held, ["default:1", "default:2"], ["default:2"])].sort()).toEqual(["default:2", "default:3"])
  })

  it("an acquire adds what it got (asked nothing taken away), and the input is not changed", () => {
    const held = new Set(["default:1"])
    const next = afterAnswer(held, [], ["default:7"])
    expect([...next].sort()).toEqual(["default:1", "default:7"])
    expect([...held]).toEqual(["default:1"])
  })
})

// The wrapper over a storage whose answers take as long as the test says.
const shard = (n: number) => ShardId.make("default", n)
const address = RunnerAddress.make("127.0.0.1", 1)
const slowStorage = (o: { acquireMs: number; refreshMs: number; refreshFails?: () => boolean }) =>
  ({
    acquire: (_a: RunnerAddress.RunnerAddress, ids: Iterable<ShardId.ShardId>) => Effect.as(Effect.sleep(o.acquireMs), Array.from(ids)),
    refresh: (_a: RunnerAddress.RunnerAddress, ids: Iterable<ShardId.ShardId>) =>
      Effect.flatMap(Effect.sleep(o.refreshMs), () => (o.refreshFails?.() === true ? Effect.fail(new PersistenceError({ cause: "lost" })) : Effect.succeed(Array.from(ids)))),
    release: () => Effect.void,
    releaseAll: () => Effect.void
  }) as unknown as RunnerStorage.RunnerStorage["Type"]

/** The node's pool as the wrapper's heartbeat sees it: every statement answers at once. */
const heartbeatSql = ((..._: ReadonlyArray<unknown>) => Effect.void) as unknown as SqlClient.SqlClient

const run = <A, E>(f: (storage: RunnerStorage.RunnerStorage["Type"]) => Effect.Effect<A, E>, inner: RunnerStorage.RunnerStorage["Type"]) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const scope = yield* Effect.scope
    const storage = yield* patient(inner, heartbeatSql, scope, { slowRefreshMs: 1000, heartbeatExpiryMs: 4000 })
    return yield* f(storage)
  })))

describe("patient shard locks: the wrapper", () => {
  it("a slow refresh is answered from what the session holds, including an acquire its caller gave up waiting for", async () => {
    const answer = await run((storage) =>
      Effect.gen(function*() {
        // Sharding gives up on the acquire after 30 ms; the acquire goes on and takes the shards.
        const waited = yield* Effect.timeoutOption(storage.acquire(address, [shard(1), shard(2)]), "30 millis")
        expect(waited._tag).toBe("None")
        yield* Effect.sleep("150 millis")
        return yield* storage.refresh(address, [shard(1), shard(2), shard(3)])
      }), slowStorage({ acquireMs: 100, refreshMs: 400 }))
    expect(answer.map(String)).toEqual(["default:1", "default:2"])
  })

  it("a refresh answers in the same turn of the event loop, however slow the storage (no timer can beat it)", async () => {
    const answers = await run((storage) =>
      Effect.gen(function*() {
        yield* storage.acquire(address, [shard(1), shard(2)])
        // runSync throws if the effect has to wait for anything asynchronous.
        const first = Effect.runSync(storage.refresh(address, [shard(1), shard(2), shard(3)]))
        const second = Effect.runSync(storage.refresh(address, [shard(1)]))
        return [first.map(String), second.map(String)]
      }), slowStorage({ acquireMs: 0, refreshMs: 400 }))
    // The second asks for shard 1 only and hears of shard 2 too, as from the storage itself: a
    // shard held but no longer Sharding's is released again, not kept unseen.
    expect(answers).toEqual([["default:1", "default:2"], ["default:1", "default:2"]])
  })

  it("a refresh that lost a shard is seen by the next refresh", async () => {
    const answers = await run((storage) =>
      Effect.gen(function*() {
        yield* storage.acquire(address, [shard(1), shard(2)])
        yield* storage.refresh(address, [shard(1), shard(2)])
        yield* Effect.sleep("100 millis")
        return (yield* storage.refresh(address, [shard(1), shard(2)])).map(String)
      }), {
        ...slowStorage({ acquireMs: 0, refreshMs: 10 }),
        refresh: () => Effect.as(Effect.sleep("10 millis"), [shard(2)])
      } as unknown as RunnerStorage.RunnerStorage["Type"])
    expect(answers).toEqual(["default:2"])
  })

  it("a refresh that failed fails every refresh until one succeeds (Sharding then drops the shards by force), and the next holds what that one found", async () => {
    let fail = true
    const answers = await run((storage) =>
      Effect.gen(function*() {
        yield* storage.acquire(address, [shard(1)])
        const first = yield* storage.refresh(address, [shard(1)])
        yield* Effect.sleep("200 millis")
        const second = yield* Effect.either(storage.refresh(address, [shard(1)]))
        const third = yield* Effect.either(storage.refresh(address, [shard(1)]))
        fail = false
        yield* Effect.sleep("300 millis")
        const fourth = yield* Effect.either(storage.refresh(address, [shard(1)]))
        yield* Effect.sleep("300 millis")
        const fifth = yield* storage.refresh(address, [shard(1)])
        return { first: first.map(String), second: second._tag, third: third._tag, fourth: fourth._tag, fifth: fifth.map(String) }
      }), slowStorage({ acquireMs: 0, refreshMs: 100, refreshFails: () => fail }))
    // The refresh the second call started answered after `fail` flipped: from then on they succeed.
    expect(answers).toEqual({ first: ["default:1"], second: "Left", third: "Left", fourth: "Right", fifth: ["default:1"] })
  })
})
