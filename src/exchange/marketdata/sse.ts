// The market stream, `GET /api/public/v1/stream?symbol=S&streams=ticker,depth,trade`, served by
// the node:http edge (a response that lasts minutes has no place in a request/response pipeline).
// Every event carries `id: <the market's sequence number>`. A client that comes back with
// Last-Event-ID gets the deltas it missed from this node's resume buffer (RESUME_DELTAS per
// market), or a fresh depth snapshot when they are gone. A comment every SSE_HEARTBEAT_MS keeps
// proxies from closing a quiet stream; at SSE_LIFETIME_MS the server sends `close` and ends it (the
// spec's 10 minutes). A client that does not read is cut off with an `error` event once more than
// SSE_CLIENT_BUFFER_BYTES wait in its socket, so it never costs more memory than that.
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

/** The events of one delta, rendered once per node whatever the number of connections: the
 * bytes for each choice of streams (a bit each), encoded once, written as they are to every
 * connection that chose them. */
interface Rendered {
  readonly depth: string
  readonly trade: string
  readonly ticker: string
  readonly bytes: Array<Buffer | undefined>
}

const DEPTH = 1, TRADE = 2, TICKER = 4
const maskOf = (streams: ReadonlySet<StreamName>) =>
  (streams.has("depth") ? DEPTH : 0) | (streams.has("trade") ? TRADE : 0) | (streams.has("ticker") ? TICKER : 0)

const bytesOf = (r: Rendered, mask: number): Buffer => {
  let b = r.bytes[mask]
  if (b === undefined) {
    b = Buffer.from((mask & DEPTH ? r.depth : "") + (mask & TRADE ? r.trade : "") + (mask & TICKER ? r.ticker : ""))
    r.bytes[mask] = b
  }
  return b
}

export const makeStreams = (data: MarketDataShape, view: MarketDataView, options: StreamOptions = defaultStreamOptions) => {
  const rendered = new WeakMap<Delta, Rendered>()
  const render = (m: Market, d: Delta, feed: Feed): Rendered => {
    let r = rendered.get(d)
    if (r === undefined) {
      const changed = d.bids.length > 0 || d.asks.length > 0
      r = {
        depth: changed ? event("depth", d.seq, { e: "depthUpdate", E: d.time, s: m.symbol, u: d.seq, b: levels(m, d.bids), a: levels(m, d.asks) }) : "",
        trade: d.trades.map((t) => event("trade", d.seq, {
          e: "trade", E: d.time, s: m.symbol, t: t.id, p: formatPrice(m.compiled, t.price),
          q: formatUnits(t.qty, m.compiled.step, ASSET_DECIMALS), Q: formatSats(t.quote), T: t.time, m: t.buyerIsMaker
        })).join(""),
        // The ticker of the copy as it is now: renders of older deltas are no longer asked for.
        ticker: d.trades.length > 0 ? event("ticker", d.seq, ticker24hrOf(m, feed, view.now())) : "",
        bytes: []
      }
      rendered.set(d, r)
    }
    return r
  }
  const snapshotOf = (m: Market, feed: Feed, streams: ReadonlySet<StreamName>) =>
    (streams.has("depth") ? event("depth", feed.seq, { e: "depthSnapshot", E: view.now(), s: m.symbol, lastUpdateId: feed.seq, bids: levels(m, feed.bids), asks: levels(m, feed.asks) }) : "") +
    (streams.has("ticker") ? event("ticker", feed.seq, ticker24hrOf(m, feed, view.now())) : "")

  interface Conn {
    readonly opened: number
    lastWrite: number
    readonly write: (text: string | Buffer) => void
    readonly close: (reason: "lifetime" | "shutdown") => void
  }
  const conns = new Set<Conn>()
  let timer: ReturnType<typeof setInterval> | undefined
  // One timer for every connection (heartbeats and the lifetime), running only while any is open.
  const tick = () => {
    const now = Date.now()
    for (const c of conns) {
      if (now - c.opened >= options.lifetimeMs) c.close("lifetime")
      else if (now - c.lastWrite >= options.heartbeatMs) c.write(": heartbeat\n\n")
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
    let open = true
    let unsubscribe = () => {}
    const end = () => {
      if (!open) return
      open = false
      unsubscribe()
      conns.delete(conn)
      if (conns.size === 0 && timer !== undefined) {
        clearInterval(timer)
        timer = undefined
      }
    }
    const conn: Conn = {
      opened: Date.now(),
      lastWrite: Date.now(),
      write: (text) => {
        if (!open || text.length === 0) return
        if (res.writableLength + text.length > options.bufferBytes) {
          // Too slow: what is queued stays bounded; the client reconnects with Last-Event-ID.
          const msg = `Client too slow: more than ${options.bufferBytes} bytes waiting; reconnect with Last-Event-ID.`
          end()
          res.end(event("error", data.feed(market.id)?.seq ?? 0, { code: -1008, msg }))
          setTimeout(() => res.destroy(), 1_000).unref()
          return
        }
        conn.lastWrite = Date.now()
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

    const seq = feed?.seq ?? 0
    conn.write(`retry: 1000\n${event("open", seq, {
      symbol: market.symbol, streams: [...streams], heartbeatMs: options.heartbeatMs, closeAfterMs: options.lifetimeMs, bufferLimitBytes: options.bufferBytes
    })}`)
    const resumeFrom = Number(req.headers["last-event-id"])
    const missed = Number.isSafeInteger(resumeFrom) && req.headers["last-event-id"] !== undefined ? data.since(market.id, resumeFrom) : undefined
    const mask = maskOf(streams)
    // What this connection has seen: a delta at or below it is already in what it was sent.
    let seen = 0
    const send = (d: Delta, f: Feed) => {
      if (d.seq <= seen) return
      seen = d.seq
      conn.write(bytesOf(render(market, d, f), mask))
    }
    const snapshot = (f: Feed) => {
      seen = f.seq
      conn.write(snapshotOf(market, f, streams))
    }
    if (missed !== undefined && feed !== undefined) {
      seen = resumeFrom
      for (const d of missed) send(d, feed)
    } else if (feed !== undefined) snapshot(feed)
    const listener: FeedListener = { delta: send, reset: snapshot }
    if (open) unsubscribe = data.subscribe(market.id, listener)
  }

  /** Ends every stream with `close` (reason "shutdown"): the node is stopping; clients reconnect elsewhere. */
  const closeAll = () => {
    for (const c of [...conns]) c.close("shutdown")
  }

  return { route, connections: () => conns.size, closeAll }
}
