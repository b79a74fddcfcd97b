// The market stream, `GET /api/public/v1/stream?symbol=S&streams=ticker,depth,trade`, served by
// the node:http edge (a response that lasts minutes has no place in a request/response pipeline).
// Every event carries `id: <the market's sequence number>`. A client that comes back with
// Last-Event-ID gets the deltas it missed from this node's resume buffer (RESUME_DELTAS per
// market), or a fresh depth snapshot when they are gone. A comment every SSE_HEARTBEAT_MS keeps
// proxies from closing a quiet stream; at SSE_LIFETIME_MS the server sends `close` and ends it (the
// spec's 10 minutes). A client that does not read is cut off with an `error` event once more than
// SSE_CLIENT_BUFFER_BYTES wait in its socket, so it never costs more memory than that. The fan-out
// (issue 22.5): one subscription per market, each delta rendered once, one buffer per connection per
// write shared by every connection with the same events, deltas coalesced while a round is under way
// (see Group below).
import type { IncomingMessage, ServerResponse } from "node:http"
import { statusOf } from "../../../schemas/exchange/errors.ts"
import { StreamParams } from "../../../schemas/exchange/marketData.ts"
import type { StreamRoute } from "../../platform/http/ServiceEdge.ts"
import { decodeQuery, queryRecord } from "../http/decodeErrors.ts"
import type { Market } from "../markets/marketSpec.ts"
import { formatPrice, formatSats } from "../market/amounts.ts"
import { formatUnits } from "../units.ts"
import { ASSET_DECIMALS } from "../markets/marketSpec.ts"
import { type MarketDataView, ticker24hrOf } from "./bodies.ts"
import type { Delta, Feed, Levels } from "./feed.ts"
import type { FeedListener, MarketDataShape } from "./MarketData.ts"

/** Bytes a connection may have waiting in its socket (written, not yet taken by the client). */
export const SSE_CLIENT_BUFFER_BYTES = 256 * 1024
export const SSE_HEARTBEAT_MS = 15_000
export const SSE_LIFETIME_MS = 10 * 60_000

export type StreamName = "ticker" | "depth" | "trade"
const NAMES: ReadonlyArray<StreamName> = ["ticker", "depth", "trade"]

export interface StreamOptions {
  readonly heartbeatMs: number
  readonly lifetimeMs: number
  readonly bufferBytes: number
  /** Connections a fan-out round writes per turn (SSE_FANOUT_SLICE unless told). */
  readonly slice?: number
}

export const defaultStreamOptions: StreamOptions = { heartbeatMs: SSE_HEARTBEAT_MS, lifetimeMs: SSE_LIFETIME_MS, bufferBytes: SSE_CLIENT_BUFFER_BYTES }

/** `streams` as a set, or undefined when it names something else. */
export const streamsOf = (text: string | undefined): ReadonlySet<StreamName> | undefined => {
  if (text === undefined) return new Set(NAMES)
  const parts = text.split(",").map((s) => s.trim())
  return parts.length > 0 && parts.every((p) => (NAMES as ReadonlyArray<string>).includes(p)) ? new Set(parts as Array<StreamName>) : undefined
}

export const event = (name: string, id: number, data: unknown): string => `id: ${id}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`

const levels = (m: Market, ls: Levels) => ls.map(([p, q]) => [formatPrice(m.compiled, p), formatUnits(q, m.compiled.step, ASSET_DECIMALS)])


/** Connections one turn of a fan-out round writes before it yields (2–8 µs each here): beyond it the
 * event loop serves other work (orders, reads) between slices, so tens of thousands of streams
 * never hold it for one long write loop. Not a time budget: each yield waits for a whole turn of
 * the loop, which on a busy node is long, and a share of the box measured in wall time cuts
 * slices short when other processes run. */
export const SSE_FANOUT_SLICE = 5_000

/** What the fan-out did in this process, for benchmarks (bench/fanout.ts reads it through the bench node). */
export const fanoutFigures = {
  /** Rounds (one write per connection that had something to get). */
  rounds: 0,
  /** Turns the rounds took (a round yields after SSE_FANOUT_SLICE connections). */
  slices: 0,
  writes: 0,
  bytes: 0,
  /** Process CPU over the slices, ms. */
  cpuMs: 0
}

const DEPTH = 1, TRADE = 2, TICKER = 4
const maskOf = (streams: ReadonlySet<StreamName>) =>
  (streams.has("depth") ? DEPTH : 0) | (streams.has("trade") ? TRADE : 0) | (streams.has("ticker") ? TICKER : 0)

/** One delta's depth and trade events, rendered once per node whatever the number of connections. */
interface Rendered {
  readonly depth: string
  readonly trade: string
}

interface Conn {
  readonly opened: number
  /** The event kinds it asked for (DEPTH | TRADE | TICKER). */
  readonly mask: number
  /** The highest sequence number in what it was sent: a delta at or below it is not sent again. */
  seen: number
  lastWrite: number
  live: boolean
  readonly write: (text: string | Buffer, now: number) => void
  readonly close: (reason: "lifetime" | "shutdown") => void
}

/**
 * The streams of one market on this route: one subscription to the market's copy whatever the
 * number of connections, the deltas told and not yet written to every connection, and the fan-out
 * round under way. A round writes each connection one buffer holding every delta it has not seen
 * (the same Buffer object for every connection that chose the same events), a slice at a time;
 * deltas told meanwhile join the pending ones, and the connections the round already passed get
 * them in the next round. So the writes per connection follow the time a round takes, not the
 * number of batches: when the node is busy, deltas coalesce.
 */
interface Group {
  readonly market: Market
  readonly conns: Set<Conn>
  /** Deltas told and not yet written to every connection, in sequence order. */
  pending: Array<Delta>
  /** The copy as last told (the ticker is rendered from it). */
  feed: Feed | undefined
  /** The buffer for (seen, mask) while `pending` stays as it is. */
  readonly bytes: Map<string, Buffer>
  /** The connections of the round under way; undefined when none is. */
  round: Array<Conn> | undefined
  /** The next connection of the round to write. */
  at: number
  /** Deltas were told while the round was under way. */
  grew: boolean
  /** A round is about to start (after the turn that told the first delta). */
  scheduled: boolean
  unsubscribe: () => void
}

export const makeStreams = (data: MarketDataShape, view: MarketDataView, options: StreamOptions = defaultStreamOptions) => {
  const rendered = new WeakMap<Delta, Rendered>()
  const render = (m: Market, d: Delta): Rendered => {
    let r = rendered.get(d)
    if (r === undefined) {
      r = {
        depth: d.bids.length > 0 || d.asks.length > 0 ? event("depth", d.seq, { e: "depthUpdate", E: d.time, s: m.symbol, u: d.seq, b: levels(m, d.bids), a: levels(m, d.asks) }) : "",
        trade: d.trades.map((t) => event("trade", d.seq, {
          e: "trade", E: d.time, s: m.symbol, t: t.id, p: formatPrice(m.compiled, t.price),
          q: formatUnits(t.qty, m.compiled.step, ASSET_DECIMALS), Q: formatSats(t.quote), T: t.time, m: t.buyerIsMaker
        })).join("")
      }
      rendered.set(d, r)
    }
    return r
  }
  /** The events of the deltas above `seen`, in order, and one ticker after them when any traded:
   * a ticker is the market as it is now, so the older ones a coalesced write would carry are stale. */
  const textOf = (m: Market, deltas: ReadonlyArray<Delta>, seen: number, mask: number, feed: Feed | undefined, ticker: (id: number) => string) => {
    let text = ""
    let tradedAt = 0
    for (const d of deltas) {
      if (d.seq <= seen) continue
      const r = render(m, d)
      if (mask & DEPTH) text += r.depth
      if (mask & TRADE) text += r.trade
      if (d.trades.length > 0) tradedAt = d.seq
    }
    if (mask & TICKER && tradedAt > 0 && feed !== undefined) text += ticker(tradedAt)
    return text
  }
  const snapshotOf = (m: Market, feed: Feed, mask: number) =>
    (mask & DEPTH ? event("depth", feed.seq, { e: "depthSnapshot", E: view.now(), s: m.symbol, lastUpdateId: feed.seq, bids: levels(m, feed.bids), asks: levels(m, feed.asks) }) : "") +
    (mask & TICKER ? event("ticker", feed.seq, ticker24hrOf(m, feed, view.now())) : "")

  const conns = new Set<Conn>()
  const groups = new Map<number, Group>()

  const bytesFor = (g: Group, seen: number, mask: number): Buffer => {
    const key = `${seen}:${mask}`
    let b = g.bytes.get(key)
    if (b === undefined) {
      let ticker: string | undefined
      b = Buffer.from(textOf(g.market, g.pending, seen, mask, g.feed, (id) => (ticker ??= event("ticker", id, ticker24hrOf(g.market, g.feed!, view.now())))))
      g.bytes.set(key, b)
    }
    return b
  }

  const slice = options.slice ?? SSE_FANOUT_SLICE
  const startRound = (g: Group) => {
    g.round = [...g.conns]
    g.at = 0
    g.grew = false
    fanoutFigures.rounds++
    step(g)
  }
  const step = (g: Group) => {
    const round = g.round
    if (round === undefined) return
    const cpu0 = process.cpuUsage()
    const top = g.pending.length === 0 ? 0 : g.pending[g.pending.length - 1]!.seq
    const now = Date.now()
    const end = Math.min(round.length, g.at + slice)
    for (; g.at < end; g.at++) {
      const c = round[g.at]!
      if (!c.live || c.seen >= top) continue
      const bytes = bytesFor(g, c.seen, c.mask)
      c.seen = top
      if (bytes.length === 0) continue
      c.write(bytes, now)
      fanoutFigures.writes++
      fanoutFigures.bytes += bytes.length
    }
    fanoutFigures.slices++
    const cpu = process.cpuUsage(cpu0)
    fanoutFigures.cpuMs += (cpu.user + cpu.system) / 1000
    if (g.at < round.length) {
      setImmediate(() => step(g))
      return
    }
    g.round = undefined
    // What every connection has seen is no longer needed.
    let least = Number.MAX_SAFE_INTEGER
    for (const c of g.conns) least = Math.min(least, c.seen)
    g.pending = g.pending.filter((d) => d.seq > least)
    g.bytes.clear()
    if (g.grew) startRound(g)
  }

  const groupOf = (market: Market): Group => {
    let g = groups.get(market.id)
    if (g !== undefined) return g
    const group: Group = { market, conns: new Set(), pending: [], feed: undefined, bytes: new Map(), round: undefined, at: 0, grew: false, scheduled: false, unsubscribe: () => {} }
    const listener: FeedListener = {
      delta: (d, feed) => {
        group.feed = feed
        group.pending.push(d)
        group.bytes.clear()
        if (group.round !== undefined) group.grew = true
        else if (!group.scheduled) {
          // After the turn: the other deltas told in it go in the same write.
          group.scheduled = true
          queueMicrotask(() => {
            group.scheduled = false
            if (group.round === undefined && groups.get(market.id) === group) startRound(group)
          })
        }
      },
      reset: (feed) => {
        // The copy was replaced: every connection starts again from a snapshot of it.
        group.feed = feed
        group.pending = []
        group.bytes.clear()
        const snapshots = new Map<number, string>()
        const now = Date.now()
        for (const c of group.conns) {
          let text = snapshots.get(c.mask)
          if (text === undefined) snapshots.set(c.mask, text = snapshotOf(market, feed, c.mask))
          c.seen = feed.seq
          c.write(text, now)
        }
      }
    }
    groups.set(market.id, group)
    group.unsubscribe = data.subscribe(market.id, listener)
    return group
  }

  let timer: ReturnType<typeof setInterval> | undefined
  // One timer for every connection (heartbeats and the lifetime), running only while any is open.
  const tick = () => {
    const now = Date.now()
    for (const c of conns) {
      if (now - c.opened >= options.lifetimeMs) c.close("lifetime")
      else if (now - c.lastWrite >= options.heartbeatMs) c.write(": heartbeat\n\n", now)
    }
  }
  const tickEvery = Math.max(10, Math.min(1_000, Math.floor(Math.min(options.heartbeatMs, options.lifetimeMs) / 4)))

  const refuse = (res: ServerResponse, headers: Record<string, string>, code: -1100 | -1101 | -1102 | -1121, msg: string) => {
    const body = JSON.stringify({ code, msg })
    res.writeHead(statusOf(code), { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers })
    res.end(body)
  }
  const decode = decodeQuery(StreamParams)

  const route: StreamRoute = (req: IncomingMessage, res: ServerResponse, query: string, headers: Record<string, string>) => {
    const params = decode(queryRecord(query))
    if (!params.ok) return refuse(res, headers, params.error.code as -1100, params.error.msg)
    const market = view.find(params.value.symbol)
    if (market === undefined) return refuse(res, headers, -1121, "Invalid symbol.")
    const streams = streamsOf(params.value.streams)
    if (streams === undefined) return refuse(res, headers, -1100, "Illegal characters found in parameter 'streams'; legal range is 'ticker,depth,trade'.")
    const feed = data.feed(market.id)

    // The body ends with the connection (connection: close), so it needs no chunked framing:
    // each write goes to the socket as it is, one buffer instead of three.
    res.useChunkedEncodingByDefault = false
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-accel-buffering": "no",
      // The connection is the stream's: when the stream ends (close, cut off) the socket goes too.
      connection: "close", ...headers })
    req.socket.setNoDelay(true)
    let group: Group | undefined
    const end = () => {
      if (!conn.live) return
      conn.live = false
      conns.delete(conn)
      if (group !== undefined) {
        group.conns.delete(conn)
        if (group.conns.size === 0) {
          group.unsubscribe()
          group.round = undefined
          groups.delete(market.id)
        }
      }
      if (conns.size === 0 && timer !== undefined) {
        clearInterval(timer)
        timer = undefined
      }
    }
    const conn: Conn = {
      opened: Date.now(),
      mask: maskOf(streams),
      seen: 0,
      lastWrite: Date.now(),
      live: true,
      write: (text, now) => {
        if (!conn.live || text.length === 0) return
        if (res.writableLength + text.length > options.bufferBytes) {
          // Too slow: what is queued stays bounded; the client reconnects with Last-Event-ID.
          const msg = `Client too slow: more than ${options.bufferBytes} bytes waiting; reconnect with Last-Event-ID.`
          end()
          res.end(event("error", data.feed(market.id)?.seq ?? 0, { code: -1008, msg }))
          setTimeout(() => res.destroy(), 1_000).unref()
          return
        }
        conn.lastWrite = now
        res.write(text)
      },
      close: (reason) => {
        const seq = data.feed(market.id)?.seq ?? 0
        end()
        res.end(event("close", seq, { reason, afterMs: Date.now() - conn.opened, reconnect: true }))
      }
    }
    conns.add(conn)
    if (timer === undefined) timer = setInterval(tick, tickEvery)
    res.on("close", end)
    res.on("error", end)

    const now = Date.now()
    conn.write(`retry: 1000\n${event("open", feed?.seq ?? 0, {
      symbol: market.symbol, streams: [...streams], heartbeatMs: options.heartbeatMs, closeAfterMs: options.lifetimeMs, bufferLimitBytes: options.bufferBytes
    })}`, now)
    const resumeFrom = Number(req.headers["last-event-id"])
    const missed = Number.isSafeInteger(resumeFrom) && req.headers["last-event-id"] !== undefined ? data.since(market.id, resumeFrom) : undefined
    if (missed !== undefined && feed !== undefined) {
      // What it missed, in one write; then the deltas the route tells after this turn.
      conn.write(textOf(market, missed, resumeFrom, conn.mask, feed, (id) => event("ticker", id, ticker24hrOf(market, feed, view.now()))), now)
      conn.seen = Math.max(resumeFrom, missed.at(-1)?.seq ?? resumeFrom)
    } else if (feed !== undefined) {
      conn.seen = feed.seq
      conn.write(snapshotOf(market, feed, conn.mask), now)
    }
    if (!conn.live) return
    group = groupOf(market)
    group.conns.add(conn)
  }

  /** Ends every stream with `close` (reason "shutdown"): the node is stopping; clients reconnect elsewhere. */
  const closeAll = () => {
    for (const c of [...conns]) c.close("shutdown")
  }

  return { route, connections: () => conns.size, closeAll }
}
