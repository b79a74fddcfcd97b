// Keeps every listed market's entity awake: at start and whenever the registry lists a market
// this node has not woken yet, it sends the market an Activate (volatile; the owner, wherever it
// is, rebuilds the book and keeps it alive). Every node does this; an Activate to an entity that
// is already awake costs one message.
import { Duration, Effect, Layer, Schedule } from "effect"
import { Activate, Market } from "../../../schemas/exchange/market.ts"
import { MarketRegistry } from "./MarketRegistry.ts"

export const sweepEveryMs = 5_000

export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const registry = yield* MarketRegistry
  const markets = yield* Market.client
  const awake = new Set<string>()
  const wake = Effect.forEach(registry.all().filter((m) => !awake.has(m.symbol)), (m) =>
    markets(m.symbol).Activate(new Activate()).pipe(
      Effect.timeout(Duration.seconds(30)),
      Effect.tap(() => Effect.sync(() => awake.add(m.symbol))),
      Effect.catchAllCause((cause) => Effect.logWarning(`market ${m.symbol} did not wake yet; retrying`, cause))
    ), { concurrency: 8, discard: true })
  yield* wake.pipe(Effect.repeat(Schedule.spaced(Duration.millis(sweepEveryMs))), Effect.forkScoped)
}))
