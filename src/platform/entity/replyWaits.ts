// One wait per node for the reply of a persisted entity request that a caller may retry (same
// primary key, e.g. an HTTP retry with the same Idempotency-Key), kept to the reply whoever stops
// waiting. Why: @effect/cluster 0.60 answers a second send of a persisted request by polling
// storage for the first one's reply (Runners.replyFromStorage); a later send of it on the same
// node joins that poller, and when the poller's caller goes away (an HTTP client that timed out)
// the joiners are left on a latch nobody opens: the request is never answered on this node again,
// though its reply is stored (social-change-abort.test.ts, two retries). Here callers only join a
// fiber that sends and waits, and no caller interrupts it; it ends with the reply, or with the
// listener's scope. At most one such fiber per request in flight on this node.
import { Effect, Fiber, FiberMap, Option } from "effect"

/** `(key, send)`: `send` run once per `key` at a time; every caller with that key joins it. */
export type ReplyWaits = <A, E>(key: string, send: Effect.Effect<A, E>) => Effect.Effect<A, E>

export const makeReplyWaits = Effect.map(FiberMap.make<string, unknown, unknown>(), (waits): ReplyWaits =>
  <A, E>(key: string, send: Effect.Effect<A, E>) =>
    Effect.suspend(() => {
      const running = FiberMap.unsafeGet(waits, key)
      // One key is one request (its entity, tag and primary key), so one answer type.
      if (Option.isSome(running)) return Fiber.join(running.value as Fiber.RuntimeFiber<A, E>)
      // onlyIfMissing: never interrupt a wait already there (that is what strands its joiners).
      return Effect.flatMap(FiberMap.run(waits, key, send, { onlyIfMissing: true }), Fiber.join)
    }))
