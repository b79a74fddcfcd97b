// The SSE connection's own rules, on the real MarketData service (a migrated database, the owner's
// publisher driven by a real order book) and the real stream route on a plain node:http server,
// with short timings: the heartbeat comment, `close` then the end at the lifetime, and a client
// that does not read cut off once SSE buffer bytes wait for it, while a reading client keeps up.
// And the fan-out (issue 22.5), on connections that record each write: the deltas of one turn go to
// a connection as one buffer, the same Buffer for every connection that chose the same events,
// with one ticker after them; a delta told while a round is under way reaches every connection
// once and in order.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { connect } from "node:net"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestDatabase } from "../../harness/db.ts"
import { configFrom, testMasterKey } from "../../harness/config.ts"
import { defaultBookConfig, OrderBook } from "../../src/exchange/book.ts"
import { nullSink } from "../../src/exchange/events.ts"
import { marketDataView } from "../../src/exchange/http/MarketDataHandlers.ts"
import * as MarketData from "../../src/exchange/marketdata/MarketData.ts"
import { makeStreams } from "../../src/exchange/marketdata/sse.ts"
import type { TradeRec } from "../../src/exchange/market/MarketState.ts"
import { globalId } from "../../src/exchange/markets/ids.ts"
import * as MarketRegistry from "../../src/exchange/markets/MarketRegistry.ts"
import { configLayer } from "../../src/config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"
import { migratedTestDatabase } from "../support/pg.ts"
import { DUSD, listMarket } from "../support/tradingWorld.ts"

let db: TestDatabase
let scope: Scope.CloseableScope
let server: Server
let port: number
let book: OrderBook
let publish: () => Promise<void>
/** Publishes a batch now, in this turn (its trades: `prices`, one lot each). */
let publishNow: (prices?: ReadonlyArray<number>) => void
/** Short lifetime (the first test) and long (the second), on one server by path. */
let short: ReturnType<typeof makeStreams>
let streams: ReturnType<typeof makeStreams>
const bufferBytes = 64 * 1024

beforeAll(async () => {
  db = await migratedTestDatabase("mdstream")
  await listMarket(db, "TSTDUSD", { code: "TST", propertyId: 4 }, DUSD)
  const config = configFrom({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey })
  const layer = MarketData.layer.pipe(
    Layer.provideMerge(MarketRegistry.layer),
    Layer.provideMerge(databaseLayer({ applicationName: "shardline:test", migrations })),
    Layer.provide(configLayer(config))
  )
  scope = Effect.runSync(Scope.make())
  const ctx = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const data = Context.get(ctx, MarketData.MarketData)
  const registry = Context.get(ctx, MarketRegistry.MarketRegistry)
  const market = registry.find("TSTDUSD")!
  book = new OrderBook(defaultBookConfig, nullSink)
  const publisher = await Effect.runPromise(Scope.extend(data.attach(market, book), scope))
  publish = () => Effect.runPromise(publisher.published([]))
  let tradeId = 0
  publishNow = (prices = []) => Effect.runSync(publisher.published(prices.map((p): TradeRec => {
    tradeId++
    return { tradeId: globalId(market.id, tradeId), priceTicks: p, qtyLots: 1, quoteSats: BigInt(p) * 10_000n, makerOrderId: globalId(market.id, 1),
      takerOrderId: globalId(market.id, 2), buyerUser: 1, sellerUser: 2, buyerIsMaker: false, timeMs: Date.now() }
  })))
  short = makeStreams(data, marketDataView(registry, data), { heartbeatMs: 100, lifetimeMs: 1_500, bufferBytes })
  // A fan-out round yields every 100 connections here, so a test sees a round under way.
  streams = makeStreams(data, marketDataView(registry, data), { heartbeatMs: 100, lifetimeMs: 600_000, bufferBytes, slice: 100 })
  server = createServer((req, res) => (req.url?.startsWith("/short") ? short : streams).route(req, res, (req.url ?? "").split("?")[1] ?? "", {}))
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  port = (server.address() as { port: number }).port
}, 60_000)

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((r) => server?.close(r))
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await db?.drop()
})

const rawStream = (onData: (text: string) => void, path = "/stream") =>
  new Promise<import("node:net").Socket>((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => {
      socket.write(`GET ${path}?symbol=TSTDUSD&streams=depth HTTP/1.1\r\nHost: x\r\n\r\n`)
      resolve(socket)
    })
    socket.setEncoding("utf8")
    socket.on("data", onData)
    socket.on("error", () => {})
  })

describe("the SSE connection", () => {
  it("sends heartbeats, then close at its lifetime, and ends", async () => {
    let text = ""
    const socket = await rawStream((t) => (text += t), "/short")
    const ended = new Promise((r) => socket.on("close", r))
    const t0 = Date.now()
    await ended
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_400)
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(text).toContain("content-type: text/event-stream")
    expect(text.match(/: heartbeat\n\n/g)?.length).toBeGreaterThanOrEqual(5)
    expect(text).toMatch(/id: \d+\nevent: open\n/)
    expect(text).toMatch(/id: \d+\nevent: close\ndata: \{"reason":"lifetime"/)
    expect(short.connections()).toBe(0)
  })

  it("cuts off a client that does not read once its buffer limit is reached; a reading client keeps every delta", async () => {
    let fastText = ""
    const fast = await rawStream((t) => (fastText += t))
    const slow = await rawStream(() => {})
    slow.pause()
    const slowClosed = new Promise((r) => slow.on("close", r))
    await new Promise((r) => setTimeout(r, 100))
    expect(streams.connections()).toBe(2)
    // Batches that each add or remove 1000 levels: ~40 KB of depth events a batch, until the
    // loopback's socket buffers are full and the slow client's queue grows.
    let n = 0
    for (let round = 0; round < 1_000 && streams.connections() > 1; round++) {
      const ids: Array<number> = []
      for (let i = 0; i < 1_000; i++) {
        ids.push(++n)
        book.place({ id: n, owner: "u", side: "SELL", price: 10_000 + i, qty: 1 + round })
      }
      await publish()
      for (const id of ids) book.cancel(id)
      await publish()
      await new Promise((r) => setImmediate(r))
    }
    expect(streams.connections()).toBe(1)
    slow.resume()
    await slowClosed
    // The reading client saw the deltas in sequence: ids go up by one.
    const ids = [...fastText.matchAll(/id: (\d+)\nevent: depth\ndata: \{"e":"depthUpdate"/g)].map((m) => Number(m[1]))
    expect(ids.length).toBeGreaterThan(10)
    expect(ids.every((id, i) => i === 0 || id === ids[i - 1]! + 1)).toBe(true)
    fast.destroy()
  })
})

/** A stream on a response that records each write (one element per write call). */
const recorded = (query: string) => {
  const writes: Array<string | Buffer> = []
  const handlers: Array<() => void> = []
  const res = {
    useChunkedEncodingByDefault: true,
    writableLength: 0,
    writeHead: () => res,
    write: (b: string | Buffer) => (writes.push(b), true),
    end: (b?: string | Buffer) => {
      if (b !== undefined) writes.push(b)
      for (const h of handlers) h()
      return res
    },
    on: (name: string, h: () => void) => {
      if (name === "close") handlers.push(h)
      return res
    },
    destroy: () => res
  }
  const req = { headers: {}, socket: { setNoDelay: () => {} } }
  streams.route(req as unknown as IncomingMessage, res as unknown as ServerResponse, query, {})
  return { writes, text: () => writes.map(String).join(""), close: () => res.end() }
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r))
}
const idsOf = (text: string, name: string) => [...text.matchAll(new RegExp(`id: (\\d+)\nevent: ${name}\n`, "g"))].map((m) => Number(m[1]))

describe("the fan-out", () => {
  // Above every id the slow-client test can place (at most 1,000 rounds of 1,000).
  let order = 1_000_000_000
  const level = (price: number) => book.place({ id: ++order, owner: "f", side: "BUY", price, qty: 1 })

  it("writes a turn's deltas to a connection as one buffer, the same for every connection that chose the same events, one ticker after them", async () => {
    const all = [recorded("symbol=TSTDUSD"), recorded("symbol=TSTDUSD"), recorded("symbol=TSTDUSD")]
    const depthOnly = recorded("symbol=TSTDUSD&streams=depth")
    for (const c of [...all, depthOnly]) c.writes.length = 0
    level(5_001)
    publishNow([9_000])
    level(5_002)
    publishNow([9_001])
    await turns(3)
    try {
      for (const c of all) expect(c.writes).toHaveLength(1)
      expect(all[1]!.writes[0]).toBe(all[0]!.writes[0])
      expect(all[2]!.writes[0]).toBe(all[0]!.writes[0])
      const text = all[0]!.text()
      const depth = idsOf(text, "depth")
      expect(depth).toHaveLength(2)
      expect(depth[1]).toBe(depth[0]! + 1)
      expect(idsOf(text, "trade")).toEqual(depth)
      // One ticker, for the later delta, after every depth and trade event.
      expect(idsOf(text, "ticker")).toEqual([depth[1]])
      expect(text.lastIndexOf("event: ticker")).toBeGreaterThan(text.lastIndexOf("event: trade"))
      expect(text.match(/event: (\w+)/g)).toEqual(["event: depth", "event: trade", "event: depth", "event: trade", "event: ticker"])
      expect(depthOnly.writes).toHaveLength(1)
      expect(depthOnly.text().match(/event: (\w+)/g)).toEqual(["event: depth", "event: depth"])
    } finally {
      for (const c of [...all, depthOnly]) c.close()
    }
  })

  it("a delta told while a round is under way reaches every connection once, in order", async () => {
    const n = 1_010
    const conns = Array.from({ length: n }, () => recorded("symbol=TSTDUSD&streams=depth"))
    try {
      for (const c of conns) c.writes.length = 0
      level(5_003)
      publishNow()
      await turns(1)
      // The round writes a slice per turn: some connections have the delta, the others not yet.
      const first = conns.filter((c) => c.writes.length > 0).length
      expect(first).toBeGreaterThan(0)
      expect(first).toBeLessThan(n)
      level(5_004)
      publishNow()
      for (let i = 0; i < 500 && conns.some((c) => idsOf(c.text(), "depth").length < 2); i++) await turns(1)
      const ids = conns.map((c) => idsOf(c.text(), "depth"))
      const expected = ids[0]!
      expect(expected).toHaveLength(2)
      expect(expected[1]).toBe(expected[0]! + 1)
      for (const c of ids) expect(c).toEqual(expected)
      // The connections the first round had not reached yet got both deltas in one write.
      expect(conns.filter((c) => c.writes.length === 1).length).toBeGreaterThan(0)
    } finally {
      for (const c of conns) c.close()
    }
    expect(streams.connections()).toBe(0)
  })
})
