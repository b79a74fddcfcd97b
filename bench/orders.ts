// `npm run bench -- orders`: signed LIMIT orders over HTTP against one real node process and,
// right after it with the same client and the same mix, against a least-work reference server
// (bench/parts/referenceServer.ts: node:http, the same HMAC check, an in-memory book, group commit
// of orders and trades to the same Postgres, answers after COMMIT; no Effect, no cluster, no chain).
// 64 concurrent keep-alive clients; two mixes by default: resting orders and their cancels only, and
// 80% rest-then-cancel with 20% crossing the spread and filling (every fill's legs recorded and
// broadcast inline on the node). Per target and mix: acknowledged orders/s, trades/s, p50/p99, CPU
// per acknowledged order of the process plus its Postgres backends (/proc of the backend pids from
// pg_stat_activity), event-loop utilization and the delay of a 5 ms timer, the load generator's
// and the machine's CPU, and the load average; then ours ÷ reference. For the node also: latency
// per kind, errors by code, the Market entity's batches (read, match, write, commit, sign), CPU per
// trade, the node's CPU per request at four points of the order path, a CPU profile
// (BENCH_ORDERS_PROFILE=1), and pgbench's single-row INSERT ceiling of the same Postgres. Writes
// bench/results/orders.json. The machine is shared: compare ratios and CPU per unit of work.
//
// Setup (what test/integration/exchange-trading.test.ts does, at scale): one node
// (bench/parts/orderNode.ts: `npm start`'s layer plus an IPC channel for devnet setup), one Omni
// property per market issued from the node's ledger devnet faucet (with BENCH_LEDGER=litecoind: by an
// issuer on litecoind, DUSD too), quoted in DUSD; each client is
// a user with its own key and an authorization on both assets of its market (granted through the
// Authorization entity, as `authorizations grant` does), funded on chain from the faucet; a maker
// user per market rests one large order on each side at the touch (bid 99.00, ask 100.00).
// Client orders that rest are priced off the touch (bids 90.00–98.99, asks 100.01–109.99) and
// are never filled; crossing orders (BUY 100.00 or SELL 99.00, 0.05) fill against the maker at once.
// Each client keeps at most BENCH_ORDERS_DEPTH resting orders and cancels its oldest beyond that.
//
// Knobs: BENCH_ORDERS_CLIENTS (64), BENCH_ORDERS_MARKETS (2: clients split between them),
// BENCH_ORDERS_DURATION_MS (20000, measured per target and mix), BENCH_ORDERS_WARMUP_MS (5000),
// BENCH_ORDERS_MIXES ("0,20": the crossing percentages to run, in order; BENCH_ORDERS_CROSS_PCT sets
// the second, 20), BENCH_ORDERS_DEPTH (4), BENCH_ORDERS_HISTORY_TRADES (100000 settled trades per
// market before the load, so what grows with history is measured; 0: an empty market),
// BENCH_ORDERS_SPLIT_MS (4000: after the windows, four kinds of signed request that stop at
// successive points of the order path, twice in turn, for the node's CPU per request up to each
// point; 0: skip), BENCH_ORDERS_PGBENCH_CLIENTS ("8,64"), BENCH_ORDERS_PGBENCH_SECONDS (5),
// BENCH_ORDERS_PROFILE=1 (a CPU profile of the node over the last mix's window, summarised and kept
// in bench/results/orders.cpuprofile), BENCH_ORDERS_PERF=1 (perf's on-CPU samples of the node over
// that window instead of V8's wall-clock ones, its main thread summarised: harness/perfScript.ts), BENCH_ORDERS_HEAP=1 (bytes the
// node allocated over that window, per order and by site: harness/heapProfile.ts; kept in bench/results/orders.heapprofile), BENCH_ORDERS_IDLE_PROFILE=1 (one of the node at rest before the load,
// over BENCH_ORDERS_IDLE_MS, 3000), BENCH_ORDERS_PROCESSES (1: the node's runner processes, SHARDLINE_PROCESSES;
// above 1 each process runs its own devnet, funded alike), BENCH_ORDERS_NODE_VARS (extra SHARDLINE_* for the node,
// as JSON), BENCH_ORDERS_KEEP_DB=1 (leave the databases for a look afterwards), BENCH_ORDERS_PG_SOCKET (a
// directory, e.g. /var/run/postgresql: the node and the reference reach Postgres over its Unix socket there
// instead of TCP on 127.0.0.1), BENCH_LEDGER (devnet: the
// node's in-process ledger devnet, the default; litecoind: a litecoind -regtest outside the node, set up
// as an operator would, bench/parts/benchLedger.ts; the results then go to orders-litecoind.json and the
// litecoind process's CPU is reported beside the node's), BENCH_BLOCK_MS (1000: a block on either
// ledger every so often, and the node's other devnets on the same clock). Timing is reported,
// never asserted.
import { type ChildProcess, execFile, execFileSync, fork, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { Agent } from "node:http"
import { cpus, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { Effect, Layer } from "effect"
import { Authorization, Grant } from "../schemas/exchange/authorization.ts"
import { entityIdOf } from "../src/exchange/authorization/policy.ts"
import { MARKET_SHIFT } from "../src/exchange/markets/ids.ts"
import { configLayer } from "../src/config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import { storageClient } from "../src/platform/ShardingSettings.ts"
import { configFrom, testMasterKey } from "../harness/config.ts"
import { randomLedgerKey } from "../harness/walletServices.ts"
import { adminUrl, createTestDatabase, type TestDatabase } from "../harness/db.ts"
import { createKey } from "../harness/keys.ts"
import { spawnNode, type NodeProcess } from "../harness/nodeProcess.ts"
import { type HeapProfile, type HeapSummary, summariseHeap } from "../harness/heapProfile.ts"
import { parsePerfScript, summariseOnCpu } from "../harness/perfScript.ts"
import { type BenchLedger, type LedgerName, ledgersFromEnv, openLedger } from "./parts/benchLedger.ts"
import { clusterRoundTrip } from "./parts/clusterRoundTrip.ts"
import { type CpuProfile, summarise } from "./parts/cpuProfile.ts"
import type { FundSend } from "./parts/orderNode.ts"
import type { Key } from "../harness/signed.ts"
import { legRefusals } from "../harness/legRefusals.ts"
import { type Answer, call, driveLoad, type LoadFigures, signedPath } from "./parts/orderLoad.ts"
import type { BatchFigures } from "../src/exchange/market/MarketEntity.ts"
import { printTable, writeResults, type Row } from "./report.ts"

const here = dirname(fileURLToPath(import.meta.url))
/** The node's own output (logs) of the last run. */
const nodeLog = join(here, "results", "orders.node.log")
const envInt = (name: string, fallback: number, min = 1) => {
  const v = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be an integer >= ${min}`)
  return v
}
const clients = envInt("BENCH_ORDERS_CLIENTS", 64)
const marketCount = envInt("BENCH_ORDERS_MARKETS", 2)
const durationMs = envInt("BENCH_ORDERS_DURATION_MS", 20_000)
const warmupMs = envInt("BENCH_ORDERS_WARMUP_MS", 5_000, 0)
const crossPct = envInt("BENCH_ORDERS_CROSS_PCT", 20, 0)
const depth = envInt("BENCH_ORDERS_DEPTH", 4)
const pgbenchSeconds = envInt("BENCH_ORDERS_PGBENCH_SECONDS", 5)
const pgbenchClients = (process.env.BENCH_ORDERS_PGBENCH_CLIENTS ?? "8,64").split(",").map(Number).filter((n) => n > 0)
const profile = process.env.BENCH_ORDERS_PROFILE === "1"
/** BENCH_ORDERS_HEAP=1: bytes the node allocated over the last mix's window, per order, and by site (harness/heapProfile.ts). */
const heapOn = process.env.BENCH_ORDERS_HEAP === "1"
/**
 * BENCH_ORDERS_PERF=1: `perf record` on the node over the last mix's window (the node runs with
 * --perf-basic-prof-only-functions), summarised on-CPU for its main thread (harness/perfScript.ts
 * says why beside the V8 profile). Needs `perf` on the PATH; kept in bench/results/orders.perf.data.
 */
const perfOn = process.env.BENCH_ORDERS_PERF === "1"
/** BENCH_ORDERS_IDLE_PROFILE=1: a CPU profile of the node at rest (no load), over BENCH_ORDERS_IDLE_MS (3000). */
const idleProfile = process.env.BENCH_ORDERS_IDLE_PROFILE === "1"
const idleMs = Number(process.env.BENCH_ORDERS_IDLE_MS ?? 3_000)
const keepDb = process.env.BENCH_ORDERS_KEEP_DB === "1"
/** BENCH_ORDERS_PG_SOCKET: Postgres's Unix socket directory, for the node's and the reference's connections. */
const pgSocket = process.env.BENCH_ORDERS_PG_SOCKET
/** `url` through the Unix socket in `pgSocket` when it is set (pg reads the directory from `host`). */
const served = (url: string): string => {
  if (pgSocket === undefined || pgSocket === "") return url
  const u = new URL(url)
  return `postgres://${u.username}${u.password === "" ? "" : `:${u.password}`}@${u.pathname}?host=${encodeURIComponent(pgSocket)}`
}
const historyTrades = envInt("BENCH_ORDERS_HISTORY_TRADES", 100_000, 0)
const splitMs = envInt("BENCH_ORDERS_SPLIT_MS", 4_000, 0)
const extraNodeVars = JSON.parse(process.env.BENCH_ORDERS_NODE_VARS ?? "{}") as Record<string, string>
/** Runner processes of the node (SHARDLINE_PROCESSES); above 1 each runs its own devnet (orderNode.ts). */
const nodeProcesses = envInt("BENCH_ORDERS_PROCESSES", 1)

/** Whole tokens: supply issued per base asset, and what each user's delegated addresses get. */
const baseSupplyWhole = 100_000_000n
const userBaseWhole = 100_000n
const userQuoteWhole = 1_000_000n
const makerBaseWhole = 200_000n
const makerQuoteWhole = 20_000_000n
const makerQty = "100000"
/** The makers' orders at the touch, placed on the node and seeded into the reference alike. */
const makerOrders = [{ side: "SELL", price: "100.00", quantity: makerQty }, { side: "BUY", price: "99.00", quantity: makerQty }] as const
const sats = (whole: bigint) => String(whole * 10n ** 8n)

// --- the node and its IPC ---

type Ipc = <A>(op: string, args?: Record<string, unknown>) => Promise<A>

const ipcOf = (child: ChildProcess): Ipc => {
  let next = 0
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  child.on("message", (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const p = pending.get(m.id)
    if (p === undefined) return
    pending.delete(m.id)
    if (m.ok) p.resolve(m.result)
    else p.reject(new Error(m.error))
  })
  return <A,>(op: string, args: Record<string, unknown> = {}) =>
    new Promise<A>((resolve, reject) => {
      const id = ++next
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      child.send({ id, op, ...args })
    })
}

// --- CPU from /proc (Linux) ---

const ticksPerSecond = 100
export const procCpuMs = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond
  } catch {
    return 0
  }
}

/** A process's CPU plus its children's: a node with SHARDLINE_PROCESSES > 1 is a primary and its workers. */
export const treeCpuMs = (pid: number): number => {
  let children: Array<number> = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((x) => x !== "").map(Number)
  } catch {
    // no such process, or no children file: the process alone
  }
  return children.reduce((sum, c) => sum + procCpuMs(c), procCpuMs(pid))
}
/** The whole machine: busy and total ms summed over cores. */
export const machineCpu = () => {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = f.reduce((a, b) => a + b, 0)
  const idle = f[3]! + (f[4] ?? 0)
  return { busyMs: ((total - idle) * 1000) / ticksPerSecond, totalMs: (total * 1000) / ticksPerSecond }
}

// --- statistics ---

export const pct = (sorted: ReadonlyArray<number>, p: number) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
export const round = (x: number, d = 2) => Number.isFinite(x) ? Number(x.toFixed(d)) : NaN
const mean = (xs: ReadonlyArray<number>) => xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length

// --- setup ---

interface User extends Key {
  readonly userId: number
  readonly address: string
}

interface MarketSetup {
  readonly symbol: string
  readonly base: string
  readonly baseProperty: number
}

const grantAll = async (db: TestDatabase, grants: ReadonlyArray<{ userId: number; asset: string; cap: string }>) => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey })
  const layer = storageClient(config).pipe(
    Layer.provideMerge(databaseLayer({ applicationName: "shardline:bench", migrations })),
    Layer.provide(configLayer(config))
  )
  const expiresAtMs = Date.now() + 6 * 3600_000
  // Persisted messages, as `authorizations grant` sends them; the node's runner commits each.
  await Effect.runPromise(Effect.scoped(Effect.provide(Effect.gen(function*() {
    const client = yield* Authorization.client
    yield* Effect.forEach(grants, (g) =>
      client(entityIdOf(g.userId, g.asset)).Grant(new Grant({ grantId: randomUUID(), cap: g.cap, expiresAtMs }), { discard: true }), { concurrency: 16, discard: true })
  }), layer)))
  for (let i = 0; ; i++) {
    const rows = await db.query<{ user_id: string; asset: string; delegated_address: string }>(`SELECT user_id::text, asset, delegated_address FROM authorizations`)
    if (rows.length >= grants.length) return new Map(rows.map((r) => [`${r.user_id}:${r.asset}`, r.delegated_address]))
    if (i > 3000) throw new Error(`only ${rows.length} of ${grants.length} grants committed after 300 s`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const untilFunded = async (baseUrl: string, users: ReadonlyArray<User>, assets: (u: User) => ReadonlyArray<string>) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 })
  const url = new URL(baseUrl)
  try {
    for (const u of users) {
      for (let i = 0; ; i++) {
        const a = await call(agent, url, "GET", signedPath("/account", u, {}), u)
        const balances = (JSON.parse(a.body) as { balances?: Array<{ asset: string; free: string }> }).balances ?? []
        if (assets(u).every((asset) => Number(balances.find((b) => b.asset === asset)?.free ?? 0) > 0)) break
        if (i > 300) throw new Error(`user ${u.userId} never saw its funds: ${a.body}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    }
  } finally {
    agent.destroy()
  }
}

// --- pgbench: the single-row INSERT ceiling of the same Postgres ---

const pgbenchCeiling = async (): Promise<Array<Row>> => {
  const run = promisify(execFile)
  const db = await createTestDatabase("benchpgb")
  const dir = mkdtempSync(join(tmpdir(), "pgb-"))
  const rows: Array<Row> = []
  try {
    await db.query(`CREATE TABLE ins (id BIGSERIAL PRIMARY KEY, v BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now())`)
    const script = join(dir, "insert.sql")
    writeFileSync(script, "\\set v random(1, 1000000000)\nINSERT INTO ins (v) VALUES (:v);\n")
    const u = new URL(adminUrl)
    for (const c of pgbenchClients) {
      const { stdout } = await run("pgbench", ["-n", "-M", "prepared", "-c", String(c), "-j", String(Math.min(c, 2)), "-T", String(pgbenchSeconds), "-f", script,
        "-h", u.hostname, "-p", u.port || "5432", "-U", decodeURIComponent(u.username || "postgres"), db.name], { env: { ...process.env, PGPASSWORD: decodeURIComponent(u.password) } })
      const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1] ?? NaN)
      const lat = Number(/latency average = ([\d.]+) ms/.exec(stdout)?.[1] ?? NaN)
      rows.push({ tool: "pgbench", statement: "INSERT one row, autocommit", clients: c, seconds: pgbenchSeconds, "inserts/s": Math.round(tps), "avg latency ms": round(lat) })
    }
  } catch (e) {
    rows.push({ tool: "pgbench", statement: `failed: ${e instanceof Error ? e.message.split("\n")[0]! : String(e)}`, clients: 0, seconds: 0, "inserts/s": NaN, "avg latency ms": NaN })
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await db.drop()
  }
  return rows
}

// --- the world: node, markets, users, grants, funds, makers ---

/**
 * A market that has traded before: `trades` settled trades of 500 other users (two legs each,
 * 90% final in block 100, 10% still recorded), as a market has after a few minutes at the goal
 * rate. What grows with history (sums and scans over legs) shows up in the measured window.
 */
const historySql = (marketId: number, m: MarketSetup, quote: { code: string; property: number }, trades: number) => trades === 0 ? "" : `
  INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id, buyer_user, seller_user, buyer_is_maker, time_ms)
    SELECT ${marketId} * ${MARKET_SHIFT}::bigint + g, ${marketId}, 10000, 5, 500000000, 1, 2, 1, 2, true, 0 FROM generate_series(1, ${trades}) g;
  INSERT INTO settlement_legs (trade_id, leg, asset, property_id, amount, grant_id, from_address, to_address, status, block_height)
    SELECT ${marketId} * ${MARKET_SHIFT}::bigint + g, v.leg, v.asset, v.property, 1000, 'history-' || v.leg || (g % 500),
      'history-' || v.leg || (g % 500), 'history-to', CASE WHEN g % 10 = 0 THEN 'recorded' ELSE 'final' END, CASE WHEN g % 10 = 0 THEN NULL ELSE 100 END
    FROM generate_series(1, ${trades}) g, (VALUES ('base', '${m.base}', ${m.baseProperty}), ('quote', '${quote.code}', ${quote.property})) v(leg, asset, property);
  INSERT INTO exchange_grant_leg_totals (grant_id, market_id, recorded)
    SELECT grant_id, ${marketId}, sum(amount) FROM settlement_legs
    WHERE grant_id LIKE 'history-%' AND trade_id > ${marketId} * ${MARKET_SHIFT}::bigint AND trade_id <= ${marketId} * ${MARKET_SHIFT}::bigint + ${trades}
    GROUP BY grant_id;`

export interface World {
  readonly node: NodeProcess
  readonly ipc: Ipc
  readonly markets: ReadonlyArray<MarketSetup>
  /** One user per client; client i trades on marketOfClient(i). */
  readonly users: ReadonlyArray<User>
  readonly marketOfClient: (i: number) => MarketSetup
  readonly grants: number
  readonly setupMs: number
  /** The ledger the node settles on (BENCH_LEDGER); stopped by whoever stops the node. */
  readonly ledger: BenchLedger
}

/** Starts the node on `db` and sets up the markets and users the load needs (see the header). */
export const setupWorld = async (db: TestDatabase, nodeVars: Record<string, string> = extraNodeVars, ledgerName: LedgerName = ledgersFromEnv()[0]!): Promise<World> => {
  const ledger = await openLedger(ledgerName, procCpuMs)
  const node = await spawnNode({
    ...ledger.nodeVars,
    SHARDLINE_TOPOLOGY: "single",
    SHARDLINE_DATABASE_URL: served(db.url),
    SHARDLINE_MASTER_KEY: testMasterKey,
    SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "1000000000",
    SHARDLINE_RATE_LIMIT_IP_WEIGHT: "1000000000",
    ...(nodeProcesses > 1 ? { SHARDLINE_PROCESSES: String(nodeProcesses), SHARDLINE_DEVNET_PER_NODE: "true" } : {}),
    ...nodeVars
  }, { script: join(here, "parts", "orderNode.ts"), ipc: true, startTimeoutMs: 300_000 * nodeProcesses, ...(perfOn ? { execArgv: ["--perf-basic-prof-only-functions"] } : {}) }).catch(async (e: unknown) => {
    await ledger.stop()
    throw e
  })
  try {
    const ipc = ipcOf(node.child)
    ledger.attach(ipc, db)
    const t0 = Date.now()
    const quote = await ledger.quote()

    // Markets: BXA/DUSD, BXB/DUSD, ... (one Omni property per base, issued from the faucet).
    const markets: Array<MarketSetup> = []
    for (let i = 0; i < marketCount; i++) {
      const base = `BX${String.fromCharCode(65 + i)}`
      const baseProperty = await ledger.issue(`Bench ${base}`, baseSupplyWhole)
      markets.push({ symbol: `${base}${quote.code}`, base, baseProperty })
    }
    await db.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ($1, $2, 8) ON CONFLICT DO NOTHING`, [quote.code, quote.property])
    for (const [i, m] of markets.entries()) {
      await db.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ($1, $2, 8)`, [m.base, m.baseProperty])
      // One transaction (simple protocol, several statements): the market and its history appear
      // together, so the entity's counters continue after the history when it activates.
      // Ids above the demo world's (a devnet start lists SHRDDUSD and GOLDDUSD as 1 and 2).
      const marketId = 100 + i + 1
      await db.query(`BEGIN;
        INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
          VALUES (${marketId}, '${m.symbol}', '${m.base}', '${quote.code}', '0.01', '0.01', '0.01', '100000', '0.01', '1000000', '1', '0');
        ${historySql(marketId, m, quote, historyTrades)}
        SELECT pg_notify('shardline_markets', '${m.symbol}');
        COMMIT`)
    }
    if (historyTrades > 0) await db.query(`ANALYZE`)

    // Users: one per client (split between the markets) and one maker per market.
    const makeUsers = (n: number) => Promise.all(Array.from({ length: n }, async () => {
      const address = randomLedgerKey().address
      const k = await createKey(db.url, { scopes: ["read", "trade"], addresses: [address] })
      return { ...k, address } as User
    }))
    const users: Array<User> = []
    for (let i = 0; i < clients; i += 8) users.push(...(await makeUsers(Math.min(8, clients - i))))
    const makers = await makeUsers(marketCount)
    const marketOfClient = (i: number) => markets[i % marketCount]!
    const marketOfUser = new Map<number, MarketSetup>([...users.map((u, i) => [u.userId, marketOfClient(i)] as const), ...makers.map((u, i) => [u.userId, markets[i]!] as const)])
    const isMaker = (u: User) => makers.includes(u)
    const grants = [...users, ...makers].flatMap((u) => {
      const m = marketOfUser.get(u.userId)!
      return [
        { userId: u.userId, asset: m.base, cap: String(isMaker(u) ? makerBaseWhole : userBaseWhole) },
        { userId: u.userId, asset: quote.code, cap: String(isMaker(u) ? makerQuoteWhole : userQuoteWhole) }
      ]
    })
    const delegated = await grantAll(db, grants)
    const sends: Array<FundSend> = [...users, ...makers].flatMap((u) => {
      const m = marketOfUser.get(u.userId)!
      return [
        { to: delegated.get(`${u.userId}:${m.base}`)!, property: m.baseProperty, sats: sats(isMaker(u) ? makerBaseWhole : userBaseWhole) },
        { to: delegated.get(`${u.userId}:${quote.code}`)!, property: quote.property, sats: sats(isMaker(u) ? makerQuoteWhole : userQuoteWhole) }
      ]
    })
    await ledger.fund(sends)
    await untilFunded(node.baseUrl, [...users, ...makers], (u) => [marketOfUser.get(u.userId)!.base, quote.code])

    const url = new URL(node.baseUrl)
    const setupAgent = new Agent({ keepAlive: true, maxSockets: 4 })
    for (const [i, m] of markets.entries()) {
      for (const { side, price, quantity } of makerOrders) {
        const r = await call(setupAgent, url, "POST", signedPath("/order", makers[i]!, { symbol: m.symbol, side, type: "LIMIT", timeInForce: "GTC", price, quantity }), makers[i]!)
        if (r.status !== 200) throw new Error(`maker order on ${m.symbol}: ${r.status} ${r.body}`)
      }
    }
    setupAgent.destroy()
    // From here blocks come on a timer, as the devnet's clock makes them (BENCH_BLOCK_MS).
    ledger.startMining()
    return { node, ipc, markets, users, marketOfClient, grants: grants.length, setupMs: Date.now() - t0, ledger }
  } catch (e) {
    await stopNode(node)
    await ledger.stop()
    throw e
  }
}

export const stopNode = async (node: NodeProcess) => {
  node.child.kill("SIGTERM")
  await Promise.race([node.exited, new Promise((r) => setTimeout(r, 20_000))])
  await node.dispose()
  writeFileSync(nodeLog, node.output())
}

// --- the least-work reference (bench/parts/referenceServer.ts), in its own process ---


interface Reference {
  readonly pid: number
  readonly url: URL
  readonly ipc: Ipc
  readonly stop: () => Promise<void>
}

const startReference = async (db: TestDatabase, keys: ReadonlyArray<Key>, markets: ReadonlyArray<MarketSetup>): Promise<Reference> => {
  const config = { databaseUrl: served(db.url), keys: keys.map((k) => ({ apiKey: k.apiKey, secretKey: k.secretKey })), markets: markets.map((m) => ({ symbol: m.symbol, makers: makerOrders })) }
  const child = fork(join(here, "parts", "referenceServer.ts"), [], { execArgv: ["--import", "tsx"], env: { ...process.env, BENCH_REF_CONFIG: JSON.stringify(config) }, stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const port = await new Promise<number>((resolve, reject) => {
    child.on("message", (m: { ready?: number }) => m.ready !== undefined && resolve(m.ready))
    child.once("exit", (code) => reject(new Error(`the reference server exited (${code}) before it listened`)))
  })
  const exited = new Promise((r) => child.once("exit", r))
  return {
    pid: child.pid!,
    url: new URL(`http://127.0.0.1:${port}`),
    ipc: ipcOf(child),
    stop: async () => {
      child.kill("SIGTERM")
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))])
    }
  }
}

// --- one measured window against one target ---

interface LoopFigures {
  readonly utilizationPct: number
  readonly lagP50Ms: number
  readonly lagP99Ms: number
  readonly lagMaxMs: number
}

interface Target {
  readonly name: string
  readonly url: URL
  readonly pid: number
  readonly ipc: Ipc
  readonly db: TestDatabase
  /** Its Postgres backends, by application_name (LIKE). */
  readonly pgApplication: string
  /** A ledger process outside it (litecoind), whose CPU is reported beside it. */
  readonly ledgerPid?: number
}

interface WindowFigures {
  readonly load: LoadFigures
  readonly seconds: number
  readonly wallStart: number
  readonly wallEnd: number
  readonly cpuMs: number
  readonly pgCpuMs: number
  readonly pgBackends: number
  readonly loadGenCpuMs: number
  readonly machineBusyMs: number
  readonly loop: LoopFigures
  readonly loadAverage: string
  readonly commits: number
  readonly ledgerCpuMs: number
}

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")

const measureWindow = async (target: Target, users: ReadonlyArray<User>, symbolOf: (i: number) => string, mixPct: number, hooks: { open?: () => Promise<void>; close?: () => Promise<void> } = {}): Promise<WindowFigures> => {
  const xacts = async () => Number((await target.db.query<{ c: string }>(`SELECT xact_commit::text AS c FROM pg_stat_database WHERE datname = current_database()`))[0]!.c)
  let pgPids: Array<number> = []
  let cpu0 = 0, pg0 = 0, xact0 = 0, wallStart = 0, ledger0 = 0
  const ledgerCpu = () => target.ledgerPid === undefined ? 0 : procCpuMs(target.ledgerPid)
  let loadGen0 = process.cpuUsage()
  let machine0 = machineCpu()
  let end: Omit<WindowFigures, "load" | "seconds" | "wallStart"> | undefined
  const load = await driveLoad({
    url: target.url, users, symbolOf, crossPct: mixPct, depth, warmupMs, durationMs,
    window: {
      open: async () => {
        await target.ipc("loop", { reset: true })
        await hooks.open?.()
        pgPids = (await target.db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1`, [target.pgApplication])).map((r) => r.pid)
        pg0 = pgPids.reduce((a, p) => a + procCpuMs(p), 0)
        xact0 = await xacts()
        cpu0 = treeCpuMs(target.pid)
        ledger0 = ledgerCpu()
        loadGen0 = process.cpuUsage()
        machine0 = machineCpu()
        wallStart = Date.now()
      },
      close: async () => {
        const cpuMs = treeCpuMs(target.pid) - cpu0
        const ledgerCpuMs = ledgerCpu() - ledger0
        const pgCpuMs = pgPids.reduce((a, p) => a + procCpuMs(p), 0) - pg0
        const used = process.cpuUsage(loadGen0)
        const machineBusyMs = machineCpu().busyMs - machine0.busyMs
        const wallEnd = Date.now()
        const loop = await target.ipc<LoopFigures>("loop", { reset: true })
        end = { cpuMs, pgCpuMs, pgBackends: pgPids.length, loadGenCpuMs: (used.user + used.system) / 1000, machineBusyMs, wallEnd, loop, loadAverage: loadAverage(), commits: (await xacts()) - xact0, ledgerCpuMs }
        await hooks.close?.()
      }
    }
  })
  return { load, seconds: durationMs / 1000, wallStart, ...end! }
}

const ordersOf = (w: WindowFigures) => w.load.counts.rest + w.load.counts.cross
const orderP = (w: WindowFigures, p: number) => pct([...w.load.latencies.rest, ...w.load.latencies.cross].sort((a, b) => a - b), p)
const errorsOf = (w: WindowFigures) => [...w.load.errors.values()].reduce((a, b) => a + b, 0)

/** One line per target and mix: what the goals are stated in. */
const headline = (mix: string, target: string, w: WindowFigures, trades: number): Row => {
  const orders = Math.max(1, ordersOf(w))
  return {
    mix,
    target,
    "orders ack/s": Math.round(ordersOf(w) / w.seconds),
    "cancels/s": Math.round(w.load.counts.cancel / w.seconds),
    "trades/s": Math.round(trades / w.seconds),
    "p50 ms": round(orderP(w, 0.5)),
    "p99 ms": round(orderP(w, 0.99)),
    errors: errorsOf(w),
    "CPU ms/order (proc+pg)": round((w.cpuMs + w.pgCpuMs) / orders, 3),
    "proc µs/order": Math.round((w.cpuMs * 1000) / orders),
    "pg µs/order": Math.round((w.pgCpuMs * 1000) / orders),
    "loop util %": w.loop.utilizationPct,
    "lag p99 ms": w.loop.lagP99Ms,
    "loadgen cores": round(w.loadGenCpuMs / durationMs),
    "machine cores": round(w.machineBusyMs / durationMs),
    "load avg": w.loadAverage
  }
}

const mixName = (p: number) => p === 0 ? "rest+cancel" : `${p}% cross`

// --- the run ---

/** The node's own figures for one mix: the Market entity's batches and its settlement legs. */
interface NodeExtras {
  batches: Array<BatchFigures & { symbol: string }>
  legs: { legs: number; signed: number; trades: number }
}

// --- on-CPU samples (BENCH_ORDERS_PERF) ---

const perfData = join(here, "results", "orders.perf.data")

/** `perf record` on a process until stopPerf; undefined (and a note) when perf cannot run here. */
const startPerf = (pid: number): ChildProcess | undefined => {
  try {
    execFileSync("perf", ["--version"], { stdio: "ignore" })
  } catch {
    console.log("BENCH_ORDERS_PERF: no perf on the PATH; skipped")
    return undefined
  }
  return spawn("perf", ["record", "-F", "999", "-g", "-p", String(pid), "-o", perfData], { stdio: "ignore" })
}

/** Stops a recording the way perf expects (SIGINT: it writes its file and exits). */
const stopPerf = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGINT")
  })

const perfSummary = (pid: number) => {
  try {
    const text = execFileSync("perf", ["script", "-i", perfData], { maxBuffer: 1 << 30, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
    return summariseOnCpu(parsePerfScript(text), pid)
  } catch (e) {
    console.log(`BENCH_ORDERS_PERF: no summary (${String(e).slice(0, 200)})`)
    return undefined
  }
}

export const run = async (): Promise<void> => {
  const mixes = (process.env.BENCH_ORDERS_MIXES ?? `0,${crossPct}`).split(",").map(Number).filter((n) => Number.isInteger(n) && n >= 0 && n <= 100)
  const db = await createTestDatabase("benchorders")
  const refDb = await createTestDatabase("benchorderref")
  let node: NodeProcess | undefined
  let ledger: BenchLedger | undefined
  let reference: Reference | undefined
  try {
    const world = await setupWorld(db)
    node = world.node
    const nodePid = node.pid
    let perfRecorded = false
    ledger = world.ledger
    const { ipc, users, marketOfClient, setupMs } = world
    const url = new URL(node.baseUrl)
    const symbolOf = (i: number) => marketOfClient(i).symbol
    reference = await startReference(refDb, users, world.markets)
    // The node's CPU with no load (timers, the devnet clocks, the Omni view's follower, storage polls).
    await new Promise((r) => setTimeout(r, 1_000))
    const idleFile = join(here, "results", "orders-idle.cpuprofile")
    if (idleProfile) await ipc("profileStart")
    const idleCpu0 = treeCpuMs(node.pid)
    await new Promise((r) => setTimeout(r, idleMs))
    const idleCoresUsed = (treeCpuMs(node.pid) - idleCpu0) / idleMs
    if (idleProfile) {
      await ipc("profileStop", { file: idleFile })
      const idle = summarise(JSON.parse(readFileSync(idleFile, "utf8")) as CpuProfile, 30)
      printTable(`Node CPU profile at rest (self time, ${idle.totalMs} ms sampled over ${idleMs} ms, no load)`, idle.byFunction)
      console.log(`\nidle profile: ${idleFile}`)
    }
    console.log(`orders bench: ledger ${world.ledger.name} (a block every ${world.ledger.blockMs} ms); setup ${(setupMs / 1000).toFixed(1)} s (${marketCount} markets, ${clients} users + ${marketCount} makers, ${world.grants} grants funded on the ${world.ledger.name}); mixes ${mixes.map(mixName).join(", ")}`)

    const nodeTarget: Target = { name: "shardline node", url, pid: node.pid, ipc, db, pgApplication: "shardline:%", ...(world.ledger.pid === undefined ? {} : { ledgerPid: world.ledger.pid }) }
    const refTarget: Target = { name: "reference", url: reference.url, pid: reference.pid, ipc: reference.ipc, db: refDb, pgApplication: "bench:reference" }
    const headlines: Array<Row> = []
    const ratios: Array<Row> = []
    const perMix: Array<Record<string, unknown>> = []
    for (const [m, mixPct] of mixes.entries()) {
      const last = m === mixes.length - 1
      // The node, then the reference right after, with the same client and the same mix.
      const extras: NodeExtras = { batches: [], legs: { legs: 0, signed: 0, trades: 0 } }
      const profileFile = join(here, "results", "orders.cpuprofile")
      const heapFile = join(here, "results", "orders.heapprofile")
      let recording: ChildProcess | undefined
      const ours = await measureWindow(nodeTarget, users, symbolOf, mixPct, {
        open: async () => {
          await ipc("batches", { reset: true })
          if (profile && last) await ipc("profileStart")
          if (heapOn && last) await ipc("heapStart")
          if (perfOn && last) recording = startPerf(node!.pid)
          perfRecorded ||= recording !== undefined
        },
        close: async () => {
          if (recording !== undefined) await stopPerf(recording)
          if (profile && last) await ipc("profileStop", { file: profileFile })
          if (heapOn && last) await ipc("heapStop", { file: heapFile })
          extras.batches = await ipc<Array<BatchFigures & { symbol: string }>>("batches", { reset: true })
        }
      })
      const legRow = (await db.query<{ legs: string; signed: string; trades: string }>(`SELECT count(*)::text AS legs, count(l.txid)::text AS signed,
          count(DISTINCT l.trade_id)::text AS trades FROM settlement_legs l JOIN trades t USING (trade_id) WHERE t.time_ms >= $1 AND t.time_ms < $2`, [ours.wallStart, ours.wallEnd]))[0]!
      extras.legs = { legs: Number(legRow.legs), signed: Number(legRow.signed), trades: Number(legRow.trades) }
      let refTrades0 = 0
      let refTrades = 0
      const theirs = await measureWindow(refTarget, users, symbolOf, mixPct, {
        open: async () => void (refTrades0 = (await reference!.ipc<{ trades: number }>("counts")).trades),
        close: async () => void (refTrades = (await reference!.ipc<{ trades: number }>("counts")).trades - refTrades0)
      })
      const mix = mixName(mixPct)
      const a = headline(mix, "shardline", ours, extras.legs.trades)
      const b = headline(mix, "reference", theirs, refTrades)
      headlines.push(a, b)
      const ratio = (k: string) => round(Number(a[k]) / Number(b[k]), 3)
      ratios.push({ mix, "orders/s ours÷ref": ratio("orders ack/s"), "p99 ours ms": a["p99 ms"]!, "p99 ref ms": b["p99 ms"]!, "CPU/order ours÷ref": ratio("CPU ms/order (proc+pg)"), "load avg": `${a["load avg"]} → ${b["load avg"]}` })
      perMix.push({ crossPct: mixPct, ours: a, reference: b, ratio: ratios[ratios.length - 1], nodeDetail: nodeDetail(ours, extras, idleCoresUsed) })
    }

    // --- the split: the same node answering requests that stop at successive points of the path ---
    const split = splitMs > 0 ? await splitCases(url, users, marketOfClient, node.pid, idleCoresUsed) : []

    await reference.stop()
    reference = undefined
    // The node is stopped before pgbench runs, so the ceiling is the database's alone.
    await stopNode(node)
    const logLines = node.output().split("\n")
    const warnings = logLines.filter((l) => / (WARN|ERROR) \(/.test(l)).length
    const refused = legRefusals(logLines)
    node = undefined
    await ledger.stop()
    ledger = undefined
    const roundTrip = splitMs > 0 ? await clusterRoundTrip(clients, Math.min(splitMs, 3_000)) : []
    const pgbench = await pgbenchCeiling()

    console.log(`\norders bench (ledger: ${world.ledger.name}, a block every ${world.ledger.blockMs} ms): ${clients} clients, ${warmupMs} ms warmup + ${durationMs} ms measured per target and mix; depth ${depth}; ${historyTrades} trades of history per market`)
    printTable("Shardline and the least-work reference, same client, one after the other (CPU: the process + its Postgres backends, per acknowledged order)", headlines)
    printTable("Ratios (goals: rest+cancel orders/s ≥ 0.5 with p99 < 50 ms; 20% cross ≥ 0.33 with p99 < 100 ms, ≤ 1 ms CPU per order)", ratios)
    for (const pm of perMix) {
      const d = pm["nodeDetail"] as ReturnType<typeof nodeDetail>
      console.log(`\n=== the node, ${mixName(pm["crossPct"] as number)} ===`)
      printTable("Latency by request (measured window)", d.latency)
      if (d.errors.length > 0) printTable("Errors by request and code", d.errors)
      printTable("Market entity batches (means per batch; commit = transaction time not in read/match/write)", d.batches)
      printTable("CPU over the measured window", d.cpu)
    }
    if (split.length > 0) printTable(`Node CPU per request along the order path (${splitMs} ms per case, after the windows; includes the node's CPU at rest)`, split)
    console.log(`\nnode log: ${nodeLog} (${logLines.length} lines, ${warnings} warnings or errors)`)
    if (refused.length > 0) printTable("Settlement legs the ledger refused at their first broadcast (node log, whole run; the sweep sends them again)", refused.map((r) => ({ code: r.code, reason: r.reason, legs: r.legs })))
    printTable("Cluster messaging alone: a Market Place round trip in this process (node stopped), no HTTP, no SQL", roundTrip)
    printTable("Postgres single-row INSERT ceiling (same server, node stopped)", pgbench)
    const onCpu = perfRecorded ? perfSummary(nodePid) : undefined
    if (onCpu !== undefined) {
      console.log(`\nOn-CPU samples of the node (perf, last mix's window): ${onCpu.samples}, ${onCpu.mainPct} % on its main thread  [load average ${loadAverage()}]`)
      printTable("Node main thread on CPU, by where the innermost frame runs (perf)", onCpu.byArea.map((r) => ({ where: r.where, pct: r.pct })))
      printTable("Node main thread on CPU, by the innermost frame of ours on the stack (callees included)", onCpu.byProjectFrame.map((r) => ({ where: r.where, pct: r.pct })))
    }
    let heapSummary: (HeapSummary & { kbPerOrder: number }) | undefined
    if (heapOn) {
      const lastOurs = headlines[headlines.length - 2]!
      const orders = Number(lastOurs["orders ack/s"]) * (durationMs / 1000)
      const summary = summariseHeap(JSON.parse(readFileSync(join(here, "results", "orders.heapprofile"), "utf8")) as HeapProfile, 25, pathToFileURL(join(here, "..")).href + "/")
      heapSummary = { ...summary, kbPerOrder: round(summary.bytes / 1000 / Math.max(1, orders), 1) }
      console.log(`\nAllocated by the node over the last mix's window (sampled, collected objects kept): ${round(summary.bytes / 1e6, 1)} MB, ${heapSummary.kbPerOrder} KB per acknowledged order  [load average ${loadAverage()}]`)
      printTable("Node allocations by site (own bytes)", summary.bySite.map((r) => ({ site: r.site, "KB per order": round(r.bytes / 1000 / Math.max(1, orders), 2), pct: r.pct })))
    }
    let profileSummary: ReturnType<typeof summarise> | undefined
    if (profile) {
      const profileFile = join(here, "results", "orders.cpuprofile")
      profileSummary = summarise(JSON.parse(readFileSync(profileFile, "utf8")) as CpuProfile, 30)
      printTable(`Node CPU profile by group (self time, ${profileSummary.totalMs} ms sampled over ${durationMs} ms, last mix)`, profileSummary.byGroup)
      printTable("Node CPU profile by area (self time)", profileSummary.byArea)
      printTable("Node CPU profile: top functions (self time)", profileSummary.byFunction)
      console.log(`\nprofile: ${profileFile} (open in Chrome DevTools or speedscope)`)
    }
    // A run with more than one process writes beside the one-process figures, not over them.
    const ledgerName = world.ledger.name
    writeResults(`orders${ledgerName === "devnet" ? "" : `-${ledgerName}`}${nodeProcesses > 1 ? `-p${nodeProcesses}` : ""}`, {
      ledger: ledgerName, blockMs: world.ledger.blockMs, processes: nodeProcesses, clients, markets: marketCount, warmupMs, durationMs, depth, historyTrades, cpus: cpus().length, loadAverageAtEnd: loadAverage(),
      comparison: headlines, ratios, mixes: perMix, split, clusterRoundTrip: roundTrip, pgbench,
      profile: profileSummary === undefined ? undefined : { byGroup: profileSummary.byGroup, byArea: profileSummary.byArea, byFunction: profileSummary.byFunction },
      allocations: heapSummary,
      legsRefusedAtFirstBroadcast: refused,
      onCpu
    })
  } finally {
    if (reference !== undefined) await reference.stop()
    if (node !== undefined) await stopNode(node)
    if (ledger !== undefined) await ledger.stop()
    if (keepDb) console.log(`kept databases ${db.name}, ${refDb.name} (BENCH_ORDERS_KEEP_DB)`)
    else {
      await db.drop()
      await refDb.drop()
    }
  }
}

/** The node's detail tables for one mix: latency per kind, errors, batches, CPU. */
const nodeDetail = (w: WindowFigures, extras: NodeExtras, idleCoresUsed: number) => {
  const { latencies, counts, errors } = w.load
  const seconds = w.seconds
  const orders = Math.max(1, ordersOf(w))
  const requests = Math.max(1, ordersOf(w) + counts.cancel)
  const latency: Array<Row> = (["rest", "cross", "cancel"] as const).map((k) => {
    const sorted = latencies[k].slice().sort((a, b) => a - b)
    return { request: k === "rest" ? "POST /order (rests)" : k === "cross" ? "POST /order (crosses, fills)" : "DELETE /order", ok: counts[k], "per s": Math.round(counts[k] / seconds), "p50 ms": round(pct(sorted, 0.5)), "p95 ms": round(pct(sorted, 0.95)), "p99 ms": round(pct(sorted, 0.99)), "max ms": round(pct(sorted, 1)) }
  })
  const byMarket = new Map<string, Array<BatchFigures>>()
  for (const b of extras.batches) byMarket.set(b.symbol, [...(byMarket.get(b.symbol) ?? []), b])
  const batches: Array<Row> = [...byMarket].map(([symbol, bs]) => {
    const sorted = (f: (b: BatchFigures) => number) => bs.map(f).sort((a, b) => a - b)
    const size = sorted((b) => b.commands)
    const tx = sorted((b) => b.txMs)
    return {
      market: symbol,
      "batches/s": round(bs.length / seconds, 1),
      "cmds mean": round(mean(size), 1),
      "cmds p99": pct(size, 0.99),
      "read ms": round(mean(bs.map((b) => b.readMs))),
      "match ms": round(mean(bs.map((b) => b.matchMs))),
      "write ms": round(mean(bs.map((b) => b.writeMs))),
      "commit ms": round(mean(bs.map((b) => b.txMs - b.readMs - b.matchMs - b.writeMs))),
      "tx p50 ms": round(pct(tx, 0.5)),
      "tx p99 ms": round(pct(tx, 0.99)),
      "sign ms": round(mean(bs.map((b) => b.signMs))),
      "answer ms": round(mean(bs.map((b) => b.answerMs))),
      "loop busy %": round((100 * bs.reduce((a, b) => a + b.totalMs, 0)) / durationMs, 1)
    }
  })
  const per = (ms: number, n: number) => Math.round((ms * 1000) / n)
  const cpu: Array<Row> = [
    { process: "node (HTTP + entities)", "CPU ms": Math.round(w.cpuMs), "cores used": round(w.cpuMs / durationMs), "µs per order": per(w.cpuMs, orders), "µs per request": per(w.cpuMs, requests), "µs per trade": extras.legs.trades > 0 ? per(w.cpuMs, extras.legs.trades) : "" },
    ...(w.ledgerCpuMs > 0 ? [{ process: "litecoind (the ledger, outside the node)", "CPU ms": Math.round(w.ledgerCpuMs), "cores used": round(w.ledgerCpuMs / durationMs), "µs per order": per(w.ledgerCpuMs, orders), "µs per request": per(w.ledgerCpuMs, requests), "µs per trade": extras.legs.trades > 0 ? per(w.ledgerCpuMs, extras.legs.trades) : "" }] : []),
    { process: `node at rest before the load (${idleMs / 1000} s)`, "CPU ms": Math.round(idleCoresUsed * durationMs), "cores used": round(idleCoresUsed), "µs per order": "", "µs per request": "", "µs per trade": "" },
    { process: `postgres backends of the node (${w.pgBackends})`, "CPU ms": Math.round(w.pgCpuMs), "cores used": round(w.pgCpuMs / durationMs), "µs per order": per(w.pgCpuMs, orders), "µs per request": per(w.pgCpuMs, requests), "µs per trade": "" },
    { process: "load generator (this process)", "CPU ms": Math.round(w.loadGenCpuMs), "cores used": round(w.loadGenCpuMs / durationMs), "µs per order": per(w.loadGenCpuMs, orders), "µs per request": per(w.loadGenCpuMs, requests), "µs per trade": "" },
    { process: `whole machine (${cpus().length} cores)`, "CPU ms": Math.round(w.machineBusyMs), "cores used": round(w.machineBusyMs / durationMs), "µs per order": per(w.machineBusyMs, orders), "µs per request": per(w.machineBusyMs, requests), "µs per trade": "" }
  ]
  return {
    latency,
    errors: [...errors].map(([k, n]): Row => ({ "request status code": k, count: n })),
    batches,
    cpu,
    eventLoop: w.loop,
    commitsPerSecond: Math.round(w.commits / seconds),
    settlement: extras.legs,
    ordersPerSecond: w.load.perSecond,
    loadAverage: w.loadAverage
  }
}

/** Four kinds of signed request that stop at successive points of the order path, twice in turn. */
const splitCases = async (url: URL, users: ReadonlyArray<User>, marketOfClient: (i: number) => MarketSetup, pid: number, idleCoresUsed: number): Promise<Array<Row>> => {
  const split: Array<Row> = []
  const tick = (n: number) => (n / 100).toFixed(2)
  const splitAgent = new Agent({ keepAlive: true, maxSockets: clients })
  const post = (key: User, params: Record<string, string>) => call(splitAgent, url, "POST", signedPath("/order", key, { type: "LIMIT", timeInForce: "GTC", ...params }), key)
  type Case = readonly [string, (key: User, i: number, resting: Array<string>) => Promise<Answer | undefined>]
  const cases: ReadonlyArray<Case> = [
    ["1 signed GET /account (HTTP, signature, read model)", (key) => call(splitAgent, url, "GET", signedPath("/account", key, {}), key)],
    ["2 POST /order, unknown symbol (-1121: HTTP, signature, decode; no entity)", (key) => post(key, { symbol: "NOPE_DUSD", side: "BUY", price: "95.00", quantity: "0.10" })],
    ["3 POST /order refused in the batch (PRICE_FILTER: + cluster message, batch with its reads, nothing written)", (key, i) => post(key, { symbol: marketOfClient(i).symbol, side: "BUY", price: "95.001", quantity: "0.10" })],
    ["4 POST /order rests (ACK) + DELETE /order (+ writes; no trades)", async (key, i, resting) => {
      if (resting.length > depth) {
        const orderId = resting.shift()!
        return call(splitAgent, url, "DELETE", signedPath("/order", key, { symbol: marketOfClient(i).symbol, orderId }), key)
      }
      const a = await post(key, { symbol: marketOfClient(i).symbol, side: "BUY", price: tick(9000 + Math.floor(Math.random() * 800)), quantity: "0.10", newOrderRespType: "ACK" })
      if (a.status === 200) resting.push((JSON.parse(a.body) as { orderId: string }).orderId)
      return a
    }]
  ]
  // Twice in turn (1 2 3 4 1 2 3 4), so a change in what else runs on the machine shows as a
  // difference between the two rounds instead of between the cases.
  for (const round of [1, 2]) {
    for (const [name, f] of cases) {
      let n = 0
      let failed = 0
      const until = performance.now() + splitMs
      const cpu0 = treeCpuMs(pid)
      await Promise.all(users.map(async (key, i) => {
        const resting: Array<string> = []
        while (performance.now() < until) {
          const a = await f(key, i, resting).catch(() => undefined)
          n++
          if (a === undefined || (a.status !== 200 && !name.startsWith("2") && !name.startsWith("3"))) failed++
        }
      }))
      const cpu = treeCpuMs(pid) - cpu0
      split.push({ requests: name, round, "per s": Math.round(n / (splitMs / 1000)), failed, "node CPU µs/request": Math.round((cpu * 1000) / Math.max(1, n)),
        "less CPU at rest": Math.round(((cpu - idleCoresUsed * splitMs) * 1000) / Math.max(1, n)), "load avg": loadAverage() })
    }
  }
  splitAgent.destroy()
  return split
}
