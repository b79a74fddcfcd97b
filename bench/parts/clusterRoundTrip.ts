// CPU per Market Place round trip through @effect/cluster's local path, in this process, against
// a stub Market entity shaped like the real one (queue, one loop answering everything queued, no
// SQL), and the same queue-and-deferred handler called without the cluster: what carrying an order
// to its market's owner as a volatile cluster message costs, apart from HTTP and Postgres.
// Sharding as the embedded node runs it (no remote serialization), storage in memory.
import { MessageStorage, RunnerHealth, Runners, RunnerStorage, Sharding, ShardingConfig } from "@effect/cluster"
import { Deferred, Effect, Layer, Queue } from "effect"
import { Market, Place, type Placed } from "../../schemas/exchange/market.ts"

const placed: Placed = {
  order: { symbol: "BXADUSD", orderId: "1", clientOrderId: "c", side: "BUY", price: "95.00", origQty: "0.10", executedQty: "0", cummulativeQuoteQty: "0", status: "NEW", time: 0, updateTime: 0 },
  fills: [],
  duplicate: false
}

/** A queue and the loop that answers everything queued, as MarketEntity's commit loop does (without the commit). */
const answering = Effect.gen(function*() {
  const queue = yield* Queue.unbounded<Deferred.Deferred<Placed>>()
  yield* Effect.gen(function*() {
    const first = yield* Queue.take(queue)
    const rest = yield* Queue.takeUpTo(queue, 1_999)
    for (const d of [first, ...rest]) yield* Deferred.succeed(d, placed)
  }).pipe(Effect.forever, Effect.forkScoped)
  return Effect.gen(function*() {
    const done = yield* Deferred.make<Placed>()
    yield* Queue.offer(queue, done)
    return yield* Deferred.await(done)
  })
})

const StubMarket = Market.toLayer(Effect.map(answering, (enqueue) => Market.of({
  Place: () => enqueue,
  Cancel: () => Effect.dieMessage("stub"),
  CancelAll: () => Effect.dieMessage("stub"),
  Batch: () => Effect.dieMessage("stub"),
  ExpireGrant: () => Effect.dieMessage("stub"),
  Activate: () => Effect.void
})), { concurrency: "unbounded", mailboxCapacity: "unbounded" })

const sharding = Sharding.layer.pipe(
  Layer.provideMerge(Runners.layerNoop),
  Layer.provideMerge(MessageStorage.layerMemory),
  Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
  Layer.provide(ShardingConfig.layer({ simulateRemoteSerialization: false }))
)

export interface RoundTrip {
  readonly [key: string]: string | number
  readonly path: string
  readonly "calls/s": number
  readonly "CPU µs/call": number
}

/** `concurrency` callers in a closed loop for `ms`, after a warmup of the same length. */
const measure = (path: string, call: Effect.Effect<unknown>, concurrency: number, ms: number) =>
  Effect.gen(function*() {
    const loop = (untilMs: number, count: { n: number }) =>
      Effect.all(Array.from({ length: concurrency }, () => Effect.whileLoop({
        while: () => Date.now() < untilMs,
        body: () => call,
        step: () => { count.n++ }
      })), { concurrency: "unbounded", discard: true })
    yield* loop(Date.now() + ms, { n: 0 })
    const count = { n: 0 }
    const cpu0 = process.cpuUsage()
    yield* loop(Date.now() + ms, count)
    const cpu = process.cpuUsage(cpu0)
    return { path, "calls/s": Math.round(count.n / (ms / 1000)), "CPU µs/call": Math.round((cpu.user + cpu.system) / Math.max(1, count.n)) } satisfies RoundTrip
  })

export const clusterRoundTrip = (concurrency: number, ms: number): Promise<ReadonlyArray<RoundTrip>> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const client = yield* Market.client
    const place = new Place({ userId: 1, clientOrderId: "c", side: "BUY", price: "95.00", quantity: "0.10" })
    const viaCluster = yield* measure("Place through the cluster (local entity, stub handler)", client("BXADUSD").Place(place).pipe(Effect.orDie), concurrency, ms)
    const direct = yield* measure("the same handler without the cluster (queue + deferred)", yield* answering, concurrency, ms)
    return [viaCluster, direct]
  }).pipe(Effect.provide(StubMarket.pipe(Layer.provideMerge(sharding))))))
