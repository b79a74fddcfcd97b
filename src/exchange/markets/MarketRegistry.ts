// Every node's copy of the market registry, in memory: exchangeInfo, symbol lookup and order
// routing never touch the database. Loaded at start, reloaded when a lister notifies
// (marketsChannel, at commit) and every `reloadEveryMs` in case a notification was lost.
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { listen } from "../../platform/database/Notifications.ts"
import { marketIdOf } from "./ids.ts"
import type { Market } from "./marketSpec.ts"
import { listMarkets, marketsChannel } from "./marketStore.ts"
import { normalizeSymbol } from "./symbols.ts"

export const reloadEveryMs = 10_000

export interface MarketRegistryShape {
  readonly all: () => ReadonlyArray<Market>
  /** A symbol as the client wrote it (BASEQUOTE, BASE_QUOTE, BASE/QUOTE, BASE-QUOTE, any case). */
  readonly find: (raw: string) => Market | undefined
  /** The market an order or trade id belongs to. */
  readonly ofId: (id: number) => Market | undefined
  /** The Omni property of an asset some listed market trades. */
  readonly propertyOf: (asset: string) => number | undefined
  /** Reloads now (a lister in this process calls it after its commit). */
  readonly reload: Effect.Effect<void>
}

export class MarketRegistry extends Context.Tag("shardline/MarketRegistry")<MarketRegistry, MarketRegistryShape>() {}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let markets: ReadonlyArray<Market> = []
  let bySymbol = new Map<string, Market>()
  let byId = new Map<number, Market>()
  let properties = new Map<string, number>()
  const load = listMarkets.pipe(
    Effect.tap((list) => Effect.sync(() => {
      markets = list
      bySymbol = new Map(list.map((m) => [m.symbol, m]))
      byId = new Map(list.map((m) => [m.id, m]))
      properties = new Map(list.flatMap((m) => [[m.base, m.baseProperty], [m.quote, m.quoteProperty]]))
    })),
    Effect.provideService(SqlClient.SqlClient, sql),
    Effect.asVoid
  )
  const reload = load.pipe(Effect.catchAllCause((cause) => Effect.logWarning("market registry reload failed", cause)))
  yield* load.pipe(Effect.orDie)
  yield* listen(marketsChannel, () => Effect.runFork(reload))
  yield* reload.pipe(Effect.repeat(Schedule.spaced(Duration.millis(reloadEveryMs))), Effect.forkScoped)
  return MarketRegistry.of({
    all: () => markets,
    find: (raw) => bySymbol.get(normalizeSymbol(raw)),
    ofId: (id) => {
      const m = marketIdOf(id)
      return m === undefined ? undefined : byId.get(m)
    },
    propertyOf: (asset) => properties.get(asset),
    reload
  })
})

export const layer = Layer.scoped(MarketRegistry, make)
