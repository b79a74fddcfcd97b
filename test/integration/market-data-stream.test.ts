// The SSE connection's own rules, on the real MarketData service (a migrated database, the owner's
// publisher driven by a real order book) and the real stream route on a plain node:http server,
// with short timings: the heartbeat comment, `close` then the end at the lifetime, and a client
// that does not read cut off once SSE buffer bytes wait for it, while a reading client keeps up.
import { createServer, type Server } from "node:http"
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
  short = makeStreams(data, marketDataView(registry, data), { heartbeatMs: 100, lifetimeMs: 1_500, bufferBytes })
  streams = makeStreams(data, marketDataView(registry, data), { heartbeatMs: 100, lifetimeMs: 600_000, bufferBytes })
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
