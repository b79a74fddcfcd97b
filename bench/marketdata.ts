// `npm run bench -- marketdata`: (a) every read the edge keeps (ping, time, depth?limit=100,
// ticker/price for one market and for all, bookTicker) through a running node as `npm start` runs
// it (cluster/main.ts: the node layer, all three listeners; the fast lane, from the node's
// in-memory copy) against a bare node:http server answering the same bytes, same run, same load
// generator as `bench -- http`, the load average with each row; (b) SSE fan-out on its own: a
// node-side MarketData service (real, on this machine's Postgres) publishing a trading market's
// batches to BENCH_MD_STREAMS open streams (real sockets, opened by a child process so the
// clients do not share the server's CPU), the delay from a batch's publish to each client's
// receipt of its trade event (p50/p99), and the server's memory per open stream (the same on a
// node that takes orders meanwhile: `bench -- fanout`). Writes
// bench/results/marketdata.json. Timing is reported, never asserted.
//
// Setup of (a): a node starts once on a fresh database (the demo world lists SHRDDUSD), stops;
// 100 bids, 100 asks and one trade are written as a market's own rows would be (a user, a live
// authorization, open orders, a trade); the node starts again and its Market entity rebuilds the
// book from them, so depth has 100 levels a side and the ticker a last price.
//
// Knobs: BENCH_HTTP_CONCURRENCY/DURATION_MS/WARMUP_MS (as `bench -- http`; the duration is split
// into BENCH_MD_ROUNDS = 3 turns of ours then bare, so both meet the box's load alike), BENCH_MD_NODE_WARMUP_MS
// (8000: every route read in turn before the measured cases), BENCH_MD_COLD=0 (skip the
// ticker/price case measured right after the node starts), BENCH_MD_STREAMS
// (5000), BENCH_MD_BATCHES (200 batches, one every BENCH_MD_BATCH_MS = 100 ms, each a trade and
// level changes), BENCH_MD_PARTS ("rest,sse").
import { fork } from "node:child_process"
import { createServer } from "node:http"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { configFrom, testMasterKey } from "../harness/config.ts"
import { createTestDatabase } from "../harness/db.ts"
import { spawnNode } from "../harness/nodeProcess.ts"
import { defaultBookConfig, OrderBook } from "../src/exchange/book.ts"
import { recordingSink, type BookEvent } from "../src/exchange/events.ts"
import { marketDataView } from "../src/exchange/http/MarketDataHandlers.ts"
import { quoteUnits } from "../src/exchange/market/amounts.ts"
import type { TradeRec } from "../src/exchange/market/MarketState.ts"
import * as MarketData from "../src/exchange/marketdata/MarketData.ts"
import { makeStreams } from "../src/exchange/marketdata/sse.ts"
import { globalId, MARKET_SHIFT } from "../src/exchange/markets/ids.ts"
import * as MarketRegistry from "../src/exchange/markets/MarketRegistry.ts"
import { configLayer } from "../src/config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import { capture, nodeVars, sameBytes, startBare, type BareSpec } from "./http.ts"
import { load as loadWith, type Measured } from "./parts/httpLoad.ts"
import { envInt, printTable, writeResults, type Row } from "./report.ts"

const streamsWanted = envInt("BENCH_MD_STREAMS", 5_000)
const concurrency = envInt("BENCH_HTTP_CONCURRENCY", 16)
const durationMs = envInt("BENCH_HTTP_DURATION_MS", 5_000)
const warmupMs = envInt("BENCH_HTTP_WARMUP_MS", 1_000)
/** Turns of ours then bare per case (BENCH_MD_ROUNDS), each durationMs / rounds long. */
const rounds = envInt("BENCH_MD_ROUNDS", 3)
/** Reads of every route before the measured cases (see restCases). */
const nodeWarmupMs = envInt("BENCH_MD_NODE_WARMUP_MS", 8_000)
/** BENCH_MD_COLD=0 skips the case measured right after the node starts. */
const coldCase = process.env.BENCH_MD_COLD !== "0"
const batches = envInt("BENCH_MD_BATCHES", 200)
const batchMs = envInt("BENCH_MD_BATCH_MS", 100)
/** Which parts run: "rest", "sse" or both (default). */
const parts = (process.env.BENCH_MD_PARTS ?? "rest,sse").split(",")
const prefix = "/api/public/v1"
/** The node's own output (logs) of the last run. */
const nodeLog = join(dirname(fileURLToPath(import.meta.url)), "results", "marketdata.node.log")
/** The streams' client process (bench/parts/sseClients.ts). */
export const sseClients = join(dirname(fileURLToPath(import.meta.url)), "parts", "sseClients.ts")

// --- (a) REST from memory against bare node:http ---

export const seedBook = async (db: Awaited<ReturnType<typeof createTestDatabase>>) => {
  const [m] = await db.query<{ id: number }>(`SELECT id FROM markets WHERE symbol = 'SHRDDUSD'`)
  const marketId = Number(m!.id)
  const [u] = await db.query<{ id: string }>(`INSERT INTO users DEFAULT VALUES RETURNING id::text`)
  await db.query(`INSERT INTO authorizations (user_id, asset, grant_id, cap, expires_at, delegated_address) VALUES
    ($1, 'SHRD', 'bench-shrd', 1000000, now() + interval '1 day', 'bench'), ($1, 'DUSD', 'bench-dusd', 1000000, now() + interval '1 day', 'bench')`, [u!.id])
  // Order n rests at 1.0000 - n ticks (bids) or 1.0100 + n ticks (asks); tick 0.0001, lot 0.01.
  await db.query(`INSERT INTO orders (order_id, market_id, user_id, client_order_id, side, price_ticks, qty_lots, status, seq, grant_id, reserved, created_ms, updated_ms)
    SELECT $1::bigint * ${MARKET_SHIFT} + n, $1, $2, 'bench-' || n, CASE WHEN n <= 100 THEN 'BUY' ELSE 'SELL' END,
      CASE WHEN n <= 100 THEN 10000 - n ELSE 10100 + n END, 100 + n, 'NEW', n, CASE WHEN n <= 100 THEN 'bench-dusd' ELSE 'bench-shrd' END, 0, 0, 0
    FROM generate_series(1, 200) AS n`, [marketId, u!.id])
  await db.query(`INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id, buyer_user, seller_user, buyer_is_maker, time_ms)
    VALUES ($1::bigint * ${MARKET_SHIFT} + 1, $1, 10050, 100, 100500000, 0, 0, $2, $2, false, $3)`, [marketId, u!.id, Date.now()])
}

/** Rounds of one case: requests and CPU summed, the percentiles the median round's. */
const combined = (ms: ReadonlyArray<Measured>): Measured => {
  const requests = ms.reduce((a, m) => a + m.requests, 0)
  const seconds = ms.reduce((a, m) => a + m.requests / m.rps, 0)
  const cpuUs = ms.reduce((a, m) => a + m.cpuUsPerRequest * m.requests, 0)
  const median = (f: (m: Measured) => number) => [...ms].map(f).sort((a, b) => a - b)[Math.floor(ms.length / 2)]!
  return {
    requests, errors: ms.reduce((a, m) => a + m.errors, 0), rps: requests / seconds, p50Ms: median((m) => m.p50Ms), p99Ms: median((m) => m.p99Ms),
    cpuUsPerRequest: cpuUs / requests, bytesPerSec: ms.reduce((a, m) => a + m.bytesPerSec, 0) / ms.length
  }
}

const restCases = async (rows: Array<Row>) => {
  const db = await createTestDatabase("benchmd")
  const stops: Array<() => Promise<void>> = []
  try {
    // One data dir for both starts: the second start needs the first's key-epochs file.
    const dataDir = mkdtempSync(join(tmpdir(), "sl-benchmd-"))
    stops.push(async () => rmSync(dataDir, { recursive: true, force: true }))
    const vars = { ...nodeVars(db.url, true), SHARDLINE_DATA_DIR: dataDir }
    const first = await spawnNode(vars)
    first.child.kill("SIGTERM")
    await first.exited
    await first.dispose()
    await seedBook(db)
    const node = await spawnNode(vars)
    stops.push(async () => {
      writeFileSync(nodeLog, node.output())
      if (node.child.exitCode !== null) console.error(`the node exited (code ${node.child.exitCode}) during the run; its output: ${nodeLog}`)
      node.child.kill("SIGTERM")
      await Promise.race([node.exited, new Promise((r) => setTimeout(r, 20_000))])
      await node.dispose()
    })
    const depthPath = `${prefix}/depth?symbol=SHRDDUSD&limit=100`
    for (let i = 0; ; i++) {
      const d = (await (await fetch(`${node.baseUrl}${depthPath}`)).json()) as { bids: Array<unknown>; asks: Array<unknown> }
      if (d.bids.length === 100 && d.asks.length === 100) break
      if (i === 600) throw new Error("the node's depth never reached 100 levels a side")
      await new Promise((r) => setTimeout(r, 100))
    }
    // Every read the edge answers from memory and keeps (ping, time; depth and the tickers until
    // the market's sequence moves), as a client asks for them.
    const cases = [
      ["GET ping", `${prefix}/ping`],
      ["GET time", `${prefix}/time`],
      ["GET depth?limit=100", depthPath],
      ["GET ticker/price?symbol=", `${prefix}/ticker/price?symbol=SHRDDUSD`],
      ["GET ticker/price (all)", `${prefix}/ticker/price`],
      ["GET ticker/bookTicker?symbol=", `${prefix}/ticker/bookTicker?symbol=SHRDDUSD`]
    ] as const
    // The bare server answers exactly our bytes, keyed by path and query (startBare probes /time).
    const spec: BareSpec = {}
    for (const [, path] of cases) spec[path] = await capture(node.baseUrl, path, {}, path === `${prefix}/time`)
    const bare = await startBare(spec)
    stops.push(() => new Promise<void>((resolve) => {
      if (bare.child.exitCode !== null) return resolve()
      bare.child.once("exit", () => resolve())
      bare.child.kill("SIGTERM")
    }))
    for (const [, path] of cases) await sameBytes(node.baseUrl, bare.baseUrl, path, {})
    const measure = async (endpoint: string, path: string, phase: string) => {
      const target = { baseUrl: node.baseUrl, pid: node.pid, next: () => ({ path, headers: {} }) }
      // Ours and bare in turns of durationMs / rounds each, so both meet the shared box's load alike.
      const ourRounds: Array<Measured> = []
      const bareRounds: Array<Measured> = []
      for (let r = 0; r < rounds; r++) {
        ourRounds.push(await loadWith(target, { concurrency, durationMs: Math.ceil(durationMs / rounds), warmupMs: r === 0 ? warmupMs : 200 }))
        bareRounds.push(await loadWith({ ...target, baseUrl: bare.baseUrl, pid: bare.pid }, { concurrency, durationMs: Math.ceil(durationMs / rounds), warmupMs: r === 0 ? warmupMs : 200 }))
      }
      const ours = combined(ourRounds)
      const theirs = combined(bareRounds)
      for (const [server, m] of [["shardline", ours], ["bare node:http", theirs]] as const) {
        rows.push({
          endpoint, phase, server, requests: m.requests, errors: m.errors, "req/s": Math.round(m.rps),
          "p50 ms": Number(m.p50Ms.toFixed(2)), "p99 ms": Number(m.p99Ms.toFixed(2)), "CPU µs/req": Math.round(m.cpuUsPerRequest),
          "req/s ours/bare": server === "shardline" ? Number((ours.rps / theirs.rps).toFixed(3)) : "",
          "CPU bare/ours": server === "shardline" ? Number((theirs.cpuUsPerRequest / ours.cpuUsPerRequest).toFixed(3)) : "",
          "load avg": loadavg().map((l) => l.toFixed(2)).join(" ")
        })
      }
    }
    // A node that has just started answers its first few thousand requests slowly (its code is
    // not optimised yet): a harness that measures one route first, at once, charges that route
    // with it. Shown once, on ticker/price; then every route is read in turn for nodeWarmupMs
    // before the measured cases, as a user meets a node that has been running.
    if (coldCase) await measure("GET ticker/price?symbol=", `${prefix}/ticker/price?symbol=SHRDDUSD`, "right after start")
    const warm = await loadWith({ baseUrl: node.baseUrl, pid: node.pid, next: (() => {
      let i = 0
      return () => ({ path: cases[i++ % cases.length]![1], headers: {} })
    })() }, { concurrency, durationMs: nodeWarmupMs, warmupMs: 0 })
    console.log(`node warm-up: ${warm.requests} reads over ${nodeWarmupMs} ms, ${Math.round(warm.cpuUsPerRequest)} µs of node CPU per read`)
    for (const [endpoint, path] of cases) await measure(endpoint, path, "warm")
  } finally {
    for (const stop of stops.reverse()) await stop()
    await db.drop()
  }
}

// --- (b) SSE fan-out ---

const fanOut = async (rows: Array<Row>) => {
  const db = await createTestDatabase("benchmdsse")
  const scope = Effect.runSync(Scope.make())
  try {
    const config = configFrom({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey })
    const layer = MarketData.layer.pipe(
      Layer.provideMerge(MarketRegistry.layer),
      Layer.provideMerge(databaseLayer({ applicationName: "shardline:bench", migrations })),
      Layer.provide(configLayer(config))
    )
    // The layer migrates the database; the market is listed after, and the registry reloads.
    const ctx = await Effect.runPromise(Layer.buildWithScope(layer, scope))
    await db.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ('BNCH', 4, 8), ('DUSD', 3, 8) ON CONFLICT DO NOTHING`)
    await db.query(`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
      VALUES (1, 'BNCHDUSD', 'BNCH', 'DUSD', '0.01', '0.001', '0.01', '100000', '0.001', '100000', '1', '0')`)
    const registry = Context.get(ctx, MarketRegistry.MarketRegistry)
    await Effect.runPromise(registry.reload)
    const data = Context.get(ctx, MarketData.MarketData)
    const market = registry.find("BNCHDUSD")!
    const events: Array<BookEvent> = []
    const book = new OrderBook(defaultBookConfig, recordingSink(events))
    const publisher = await Effect.runPromise(Scope.extend(data.attach(market, book), scope))
    const streams = makeStreams(data, marketDataView(registry, data))
    const server = createServer((req, res) => streams.route(req, res, (req.url ?? "").split("?")[1] ?? "", {}))
    server.maxConnections = streamsWanted + 100
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}${prefix}/stream?symbol=BNCHDUSD`

    const before = process.memoryUsage()
    const child = fork(sseClients, [], { env: { ...process.env, BENCH_SSE_URL: url, BENCH_SSE_N: String(streamsWanted) }, execArgv: ["--import", "tsx"] })
    const ask = <A>(m: string) => new Promise<A>((resolve) => child.once("message", (r) => resolve(r as A)) && child.send(m))
    for (let i = 0; ; i++) {
      const { open } = await ask<{ open: number }>("open?")
      if (open >= streamsWanted && streams.connections() >= streamsWanted) break
      if (i === 1_200) throw new Error(`only ${open} streams opened`)
      await new Promise((r) => setTimeout(r, 100))
    }
    const opened = process.memoryUsage()
    // Trading: each batch a resting ask and a crossing bid (one trade), plus a new bid level.
    let n = 0
    const cpu0 = process.cpuUsage()
    for (let i = 0; i < batches; i++) {
      events.length = 0
      const now = Date.now()
      book.place({ id: ++n, owner: "m", side: "SELL", price: 10_000 + (i % 50), qty: 10 })
      book.place({ id: ++n, owner: "t", side: "BUY", price: 10_000 + (i % 50), qty: 5 })
      book.place({ id: ++n, owner: "b", side: "BUY", price: 9_000 + i, qty: 1 })
      const trades: Array<TradeRec> = events.filter((e) => e.type === "trade").map((e) => e.type === "trade" ? {
        tradeId: globalId(market.id, e.tradeId), priceTicks: e.price, qtyLots: e.qty, quoteSats: quoteUnits(market.compiled, e.price, e.qty),
        makerOrderId: globalId(market.id, e.makerId), takerOrderId: globalId(market.id, e.takerId), buyerUser: 2, sellerUser: 1, buyerIsMaker: false, timeMs: now
      } : undefined!)
      await Effect.runPromise(publisher.published(trades))
      await new Promise((r) => setTimeout(r, batchMs))
    }
    const cpu = process.cpuUsage(cpu0)
    await new Promise((r) => setTimeout(r, 1_000))
    const { delays } = await ask<{ delays: Array<number> }>("done")
    delays.sort((x, y) => x - y)
    const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? NaN
    rows.push({
      streams: streams.connections(), batches, "events received": delays.length, "expected": batches * streamsWanted,
      "p50 ms": pct(0.5), "p99 ms": pct(0.99), "max ms": delays[delays.length - 1] ?? NaN,
      "server CPU ms/batch": Number(((cpu.user + cpu.system) / 1000 / batches).toFixed(2)),
      "heap KB/stream": Number(((opened.heapUsed - before.heapUsed) / 1024 / streamsWanted).toFixed(2)),
      "RSS KB/stream": Number(((opened.rss - before.rss) / 1024 / streamsWanted).toFixed(2))
    })
    streams.closeAll()
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await db.drop()
  }
}

export const run = async (): Promise<void> => {
  const rest: Array<Row> = []
  if (parts.includes("rest")) await restCases(rest)
  printTable("Market data from memory vs bare node:http answering the same bytes (goal: >= 0.6x)", rest)
  const sse: Array<Row> = []
  if (parts.includes("sse")) await fanOut(sse)
  printTable(`SSE fan-out: publish to receipt of each trade event, a batch every ${batchMs} ms (goal: p99 < 100 ms)`, sse)
  writeResults("marketdata", { cpus: cpus().length, batchMs, rest, sse })
}
