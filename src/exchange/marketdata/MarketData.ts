// Every node's copy of every market's public data (feed.ts), and the owner's side of the push
// channel. The Market entity attaches when it activates; before each batch commits, its publisher
// diffs the book's top levels against the previous batch's and numbers the delta, whose
// notification and the candles it changes go out with the batch's own write statement (the
// notification delivered at its commit: two round trips a batch fewer, issue 22); after the commit
// it applies the delta to this node's copy. One sender fiber writes heartbeats, a new owner's
// catch-up candles and any snapshot asked for, in order. Every node LISTENs: a delta one above its sequence is
// applied; a lower one is old news; a higher one is a gap, and the node refills from the snapshot
// the owner stores (asked for on `refillChannel`), then applies the deltas it held meanwhile.
// A public read never waits on any of this: it reads the copy as it is.
import { SqlClient, type Statement } from "@effect/sql"
import { Context, Deferred, Duration, Effect, FiberSet, Layer, Queue, Schedule, type Scope } from "effect"
import type { OrderBook } from "../book.ts"
import type { TradeRec } from "../market/MarketState.ts"
import { localId } from "../markets/ids.ts"
import type { Market } from "../markets/marketSpec.ts"
import { MarketRegistry } from "../markets/MarketRegistry.ts"
import { listen } from "../../platform/database/Notifications.ts"
import { DEPTH_LEVELS, type Delta, diffLevels, Feed, type FeedSnapshot, type PublicTrade } from "./feed.ts"
import type { Interval, Kline } from "./klines.ts"
import * as Q from "./marketDataSql.ts"
import { chunk, dataChannel, decodeParsed, heartbeatMessage, marketIdOf, parsePayload, refillChannel, snapshotMessage } from "./wire.ts"

/** Deltas each node keeps per market for SSE clients that come back with Last-Event-ID. */
export const RESUME_DELTAS = 1_000
/** How often an owner says its sequence number, so a node that lost the last delta of a quiet market notices. */
export const HEARTBEAT_MS = 1_000
/** How long a refill waits for the owner's snapshot before it reads and asks again. */
export const REFILL_WAIT_MS = 1_000
/** Trades a new owner re-counts into candles its predecessor may not have written. */
export const CATCH_UP_TRADES = 100_000

/** What a stream connection hears from one market on this node. */
export interface FeedListener {
  /** A delta was applied (in sequence order; told after the turn that applied it, so a listener
   * that subscribed in between may hear of a delta its snapshot already holds). */
  readonly delta: (d: Delta, feed: Feed) => void
  /** The copy was replaced (refill or a new owner): deltas before it cannot be resumed. */
  readonly reset: (feed: Feed) => void
}

/** A batch's market data, made before its commit: its notifications ride on the batch's own statement. */
export interface PreparedPublish {
  /** `[channel, payload]` for pg_notify, delivered at the batch's commit and only then. */
  readonly notifications: ReadonlyArray<readonly [string, string]>
  /** The candles the batch's trades change, in their new state. */
  readonly candles: ReadonlyArray<readonly [Interval, Kline]>
  /** Those candles' upsert as a CTE of the batch's write (none: undefined). */
  readonly klines: (sql: SqlClient.SqlClient) => Statement.Fragment | undefined
  /** After the commit: this node's copy applies the deltas. */
  readonly confirm: () => void
}

export interface Publisher {
  /**
   * Before a batch's commit, its book already changed in memory: the deltas of its trades and the
   * book's changed top levels, numbered on from the copy. Nothing changes until `confirm`; a batch
   * that does not commit is never confirmed (its market is rebuilt) and its notifications never
   * go out. The one market's batches prepare and confirm in turn, never two at once.
   */
  readonly prepare: (trades: ReadonlyArray<TradeRec>) => PreparedPublish
  /** After a committed batch whose statement did not carry the notifications: prepared, sent by the node's writer and confirmed at once. */
  readonly published: (trades: ReadonlyArray<TradeRec>) => Effect.Effect<void>
}

export interface MarketDataShape {
  /** This node's copy of a market (undefined while it was never loaded; a load starts). */
  readonly feed: (marketId: number) => Feed | undefined
  /** The Market entity, at activation: this node now publishes the market. Detached with the scope. */
  readonly attach: (market: Market, book: OrderBook) => Effect.Effect<Publisher, never, Scope.Scope>
  readonly subscribe: (marketId: number, listener: FeedListener) => () => void
  /** The deltas after `seq` this node still holds, or undefined when some are gone (or `seq` is of another copy). */
  readonly since: (marketId: number, seq: number) => ReadonlyArray<Delta> | undefined
  /** Candle history from Postgres, for reads older than memory. */
  readonly klinePage: (marketId: number, iv: Interval, start: number, end: number) => Effect.Effect<{ readonly stored: ReadonlyArray<Kline>; readonly before: Kline | undefined }>
  /** Subscriptions now, over every market (the stream route holds one per market with open streams; tests). */
  readonly listeners: () => number
  /** Whether this node publishes the market now (its Market entity runs here). */
  readonly owns: (marketId: number) => boolean
}

export class MarketData extends Context.Tag("shardline/MarketData")<MarketData, MarketDataShape>() {}

interface Replica {
  feed: Feed | undefined
  owned: boolean
  refilling: boolean
  /** Deltas that arrived while refilling, applied after the snapshot. */
  held: Array<Delta>
  /** Deltas applied since the copy was last replaced, for resume (at most RESUME_DELTAS). */
  recent: Array<Delta>
  readonly listeners: Set<FeedListener>
  /** Resolved when the owner announces a snapshot (a refill waits on it). */
  announced: Deferred.Deferred<number> | undefined
  /** The highest sequence number this node heard of: a refill needs a snapshot at least this recent. */
  want: number
}

type Job =
  | { readonly _tag: "Notify"; readonly payload: string }
  | { readonly _tag: "Klines"; readonly marketId: number; readonly rows: ReadonlyArray<readonly [Interval, Kline]> }
  | { readonly _tag: "Snapshot"; readonly marketId: number; readonly snapshot: FeedSnapshot }

const publicTrade = (t: TradeRec): PublicTrade => ({
  id: t.tradeId,
  price: t.priceTicks,
  qty: t.qtyLots,
  quote: t.quoteSats,
  time: t.timeMs,
  buyerIsMaker: t.buyerIsMaker,
  takerOrder: localId(t.takerOrderId)
})

/** The changed candles of a delta, each once, as they are now. */
const distinct = (changed: ReadonlyArray<readonly [Interval, Kline]>) => {
  const by = new Map<string, readonly [Interval, Kline]>()
  for (const c of changed) by.set(`${c[0]}:${c[1].openTime}`, c)
  return [...by.values()]
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const registry = yield* MarketRegistry
  const replicas = new Map<number, Replica>()
  const jobs = yield* Queue.unbounded<Job>()
  const withSql = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, sql)

  const replicaOf = (marketId: number): Replica => {
    let r = replicas.get(marketId)
    if (r === undefined) {
      r = { feed: undefined, owned: false, refilling: false, held: [], recent: [], listeners: new Set(), announced: undefined, want: 0 }
      replicas.set(marketId, r)
    }
    return r
  }

  // Listeners (stream connections) hear of a change after the current turn of the event loop, in
  // order: the owner's commit loop answers its batch first instead of writing to thousands of
  // sockets inside it. A listener that throws is a bug in it; the others and the copy go on.
  const told: Array<() => void> = []
  let telling = false
  const flushTold = () => {
    telling = false
    for (const f of told.splice(0)) f()
  }
  const tell = (r: Replica, f: (l: FeedListener) => void) => {
    if (r.listeners.size === 0) return
    told.push(() => {
      for (const l of r.listeners) {
        try {
          f(l)
        } catch (e) {
          Effect.runFork(Effect.logError("market data listener failed", e))
        }
      }
    })
    if (!telling) {
      telling = true
      setImmediate(flushTold)
    }
  }

  const replaced = (r: Replica, feed: Feed) => {
    r.feed = feed
    r.recent = []
    tell(r, (l) => l.reset(feed))
  }

  const applied = (r: Replica, d: Delta) => {
    const changed = r.feed!.apply(d)
    r.recent.push(d)
    if (r.recent.length > RESUME_DELTAS) r.recent.splice(0, r.recent.length - RESUME_DELTAS)
    tell(r, (l) => l.delta(d, r.feed!))
    return changed
  }

  /** A copy of the feed as it is now (later batches change the feed in place). */
  const snapshotJob = (marketId: number, feed: Feed): Job => {
    const s = feed.snapshot()
    return { _tag: "Snapshot", marketId, snapshot: { seq: s.seq, bids: [...s.bids], asks: [...s.asks], trades: [...s.trades] } }
  }

  // --- A node that is behind: the owner's snapshot, then what it held meanwhile. ---

  const refill = (marketId: number): Effect.Effect<void> =>
    Effect.gen(function*() {
      const r = replicaOf(marketId)
      for (;;) {
        if (r.owned) break
        const announced = yield* Deferred.make<number>()
        r.announced = announced
        const snapshot = yield* withSql(Q.readSnapshot(marketId))
        const need = Math.max(r.want, r.held.length > 0 ? r.held[0]!.seq - 1 : 0, r.feed?.seq ?? 0)
        if (snapshot !== undefined && snapshot.seq >= need) {
          const series = yield* withSql(Q.loadSeries(marketId))
          const feed = new Feed(snapshot, series, Date.now())
          const after = r.held.filter((d) => d.seq > snapshot.seq)
          if (after.every((d, i) => d.seq === snapshot.seq + 1 + i)) {
            r.held = []
            r.refilling = false
            replaced(r, feed)
            for (const d of after) applied(r, d)
            break
          }
        }
        // No snapshot recent enough: ask the owner, wait for its announcement (or a while), look again.
        yield* sql`SELECT pg_notify(${refillChannel}, ${String(marketId)})`
        yield* Deferred.await(announced).pipe(Effect.timeout(Duration.millis(REFILL_WAIT_MS)), Effect.ignore)
      }
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning(`market data ${marketId}: refill failed; trying again`, cause).pipe(
        Effect.zipRight(Effect.sleep(Duration.millis(REFILL_WAIT_MS))),
        Effect.zipRight(Effect.suspend(() => refill(marketId)))
      )),
      Effect.ensuring(Effect.sync(() => {
        replicaOf(marketId).refilling = false
      }))
    )

  const runFork = yield* FiberSet.makeRuntime<never>()
  const startRefill = (r: Replica, marketId: number) => {
    if (r.refilling || r.owned) return
    r.refilling = true
    runFork(refill(marketId))
  }

  const received = (payload: string) => {
    const parsed = parsePayload(payload)
    const named = marketIdOf(parsed)
    if (named !== undefined && replicas.get(named)?.owned === true) return // the owner applied it before sending
    const msg = decodeParsed(parsed)
    if (msg === undefined) return
    const marketId = msg._tag === "Delta" ? msg.delta.marketId : msg.marketId
    // A decoded message names its market as marketIdOf read it: an owner's own never gets here.
    const r = replicaOf(marketId)
    if (msg._tag !== "Delta") {
      if (msg.seq > r.want) r.want = msg.seq
      if (msg._tag === "Snapshot" && r.announced !== undefined) Deferred.unsafeDone(r.announced, Effect.succeed(msg.seq))
      if (r.feed === undefined || msg.seq > r.feed.seq) startRefill(r, marketId)
      return
    }
    const d = msg.delta
    if (r.refilling) {
      r.held.push(d)
      return
    }
    if (r.feed === undefined) {
      r.held.push(d)
      return startRefill(r, marketId)
    }
    if (d.seq <= r.feed.seq) return
    if (d.seq === r.feed.seq + 1) {
      applied(r, d)
      return
    }
    r.held = [d]
    r.want = Math.max(r.want, d.seq - 1)
    startRefill(r, marketId)
  }

  // --- The owner: a refill asked for, answered with a stored snapshot and its announcement. ---

  const refillAsked = (payload: string) => {
    const marketId = Number(payload)
    const r = replicas.get(marketId)
    if (r !== undefined && r.owned && r.feed !== undefined) Queue.unsafeOffer(jobs, snapshotJob(marketId, r.feed))
  }

  /** The one writer: jobs in order, each batch of notifications in one statement. */
  const send = Effect.gen(function*() {
    const batch = [...(yield* Queue.takeBetween(jobs, 1, 10_000))]
    for (let i = 0; i < batch.length;) {
      const job = batch[i]!
      if (job._tag === "Notify") {
        const payloads: Array<string> = []
        while (i < batch.length && batch[i]!._tag === "Notify") payloads.push((batch[i++] as Extract<Job, { _tag: "Notify" }>).payload)
        yield* sql`SELECT pg_notify(${dataChannel}, p) FROM unnest(${payloads}::text[]) AS p`
      } else if (job._tag === "Klines") {
        yield* withSql(Q.upsertKlines(job.marketId, job.rows))
        i++
      } else {
        yield* withSql(Q.writeSnapshot(job.marketId, job.snapshot))
        yield* sql`SELECT pg_notify(${dataChannel}, ${snapshotMessage(job.marketId, job.snapshot.seq)})`
        i++
      }
    }
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("market data: a write failed; nodes that miss it refill", cause)))
  yield* send.pipe(Effect.forever, Effect.forkScoped)

  yield* listen(dataChannel, received, () => {
    // LISTEN was down: whatever was sent meanwhile is lost, so every copy refills.
    for (const [marketId, r] of replicas) startRefill(r, marketId)
  })
  yield* listen(refillChannel, refillAsked)

  // Every listed market is loaded at start; a market listed later loads on its first read or delta.
  for (const m of registry.all()) startRefill(replicaOf(m.id), m.id)

  // Owners say where they are, so a copy that lost the last delta of a quiet market notices.
  yield* Effect.sync(() => {
    for (const [marketId, r] of replicas) {
      if (r.owned && r.feed !== undefined) Queue.unsafeOffer(jobs, { _tag: "Notify", payload: heartbeatMessage(marketId, r.feed.seq) })
    }
  }).pipe(Effect.repeat(Schedule.spaced(Duration.millis(HEARTBEAT_MS))), Effect.forkScoped)

  const attach = (market: Market, book: OrderBook): Effect.Effect<Publisher, never, Scope.Scope> =>
    Effect.gen(function*() {
      const r = replicaOf(market.id)
      // Recent trades and candles from Postgres; trades the candles lack (a predecessor that
      // stopped before writing them) are counted again.
      const trades = yield* withSql(Q.recentTrades(market.id)).pipe(Effect.orDie)
      const series = yield* withSql(Q.loadSeries(market.id)).pipe(Effect.orDie)
      let counted = Number.MAX_SAFE_INTEGER
      for (const s of series.values()) counted = Math.min(counted, s.klines.at(-1)?.lastId ?? 0)
      const missing = yield* withSql(Q.tradesAfter(market.id, counted, CATCH_UP_TRADES)).pipe(Effect.orDie)
      let top = book.depth(DEPTH_LEVELS)
      const lvl = (ls: typeof top.bids) => ls.map((l) => [l.price, l.qty] as const)
      // A new owner numbers from its start time × 1000: above anything a predecessor sent.
      const seq = Math.max(Date.now() * 1000, (r.feed?.seq ?? 0) + 1)
      const feed = new Feed({ seq, bids: lvl(top.bids), asks: lvl(top.asks), trades }, series, Date.now())
      const caughtUp = feed.apply({ marketId: market.id, seq, time: Date.now(), bids: [], asks: [], trades: missing })
      r.owned = true
      r.refilling = false
      r.held = []
      replaced(r, feed)
      if (caughtUp.length > 0) Queue.unsafeOffer(jobs, { _tag: "Klines", marketId: market.id, rows: distinct(caughtUp) })
      Queue.unsafeOffer(jobs, snapshotJob(market.id, feed))
      yield* Effect.addFinalizer(() => Effect.sync(() => {
        r.owned = false
      }))
      const prepare = (batchTrades: ReadonlyArray<TradeRec>): PreparedPublish => {
        const now = Date.now()
        const next = book.depth(DEPTH_LEVELS)
        const bids = diffLevels(top.bids, next.bids)
        const asks = diffLevels(top.asks, next.asks)
        const trades = batchTrades.map(publicTrade)
        const messages = bids.length === 0 && asks.length === 0 && trades.length === 0
          ? []
          : chunk(market.id, feed.seq + 1, now, bids, asks, trades)
        const candles = feed.candlesOf(trades)
        return {
          notifications: messages.map((m) => [dataChannel, m.payload] as const),
          candles,
          klines: (sql) => (candles.length === 0 ? undefined : Q.klinesUpsert(sql, market.id, candles)),
          confirm: () => {
            top = next
            for (const m of messages) applied(r, m.delta)
          }
        }
      }
      return {
        prepare,
        published: (batchTrades) => Effect.sync(() => {
          const p = prepare(batchTrades)
          for (const [, payload] of p.notifications) Queue.unsafeOffer(jobs, { _tag: "Notify", payload })
          if (p.candles.length > 0) Queue.unsafeOffer(jobs, { _tag: "Klines", marketId: market.id, rows: p.candles })
          p.confirm()
        })
      }
    })

  return MarketData.of({
    feed: (marketId) => {
      const r = replicaOf(marketId)
      if (r.feed === undefined) startRefill(r, marketId)
      return r.feed
    },
    attach,
    subscribe: (marketId, listener) => {
      const r = replicaOf(marketId)
      r.listeners.add(listener)
      return () => {
        r.listeners.delete(listener)
      }
    },
    since: (marketId, seq) => {
      const r = replicas.get(marketId)
      if (r === undefined || r.feed === undefined) return undefined
      if (seq === r.feed.seq) return []
      const first = r.recent[0]
      if (first === undefined || seq < first.seq - 1 || seq > r.feed.seq) return undefined
      return r.recent.filter((d) => d.seq > seq)
    },
    klinePage: (marketId, iv, start, end) => withSql(Q.klinePage(marketId, iv, start, end)).pipe(Effect.orDie),
    owns: (marketId) => replicas.get(marketId)?.owned === true,
    listeners: () => {
      let n = 0
      for (const r of replicas.values()) n += r.listeners.size
      return n
    }
  })
})

export const layer = Layer.scoped(MarketData, make)
