// `npm run bench -- orders`: signed LIMIT orders over HTTP against one real node process, 64
// concurrent keep-alive clients, a mixed stream (80% of orders rest and are cancelled later, 20%
// cross the spread and fill), on the machine's Postgres. Reports acknowledged orders/s, cancels/s,
// p50/p95/p99 per kind, errors by code, settlement transactions/s (legs with a txid), trades/s,
// the Market entity's batches (size, time in the transaction, commit), CPU of the node, of its
// Postgres backends and of this load generator, and, in the same run, the single-row INSERT
// ceiling of the same Postgres (pgbench). Writes bench/results/orders.json.
//
// Setup (what test/integration/exchange-trading.test.ts does, at scale): one node
// (bench/parts/orderNode.ts: `npm start`'s layer plus an IPC channel for devnet setup), one Omni
// property per market issued from the node's ledger devnet faucet, quoted in DUSD; each client is
// a user with its own key and an authorization on both assets of its market (granted through the
// Authorization entity, as `authorizations grant` does), funded on chain from the faucet; a maker
// user per market rests one large order on each side at the touch (bid 99.00, ask 100.00).
// Client orders that rest are priced off the touch (bids 90.00–98.99, asks 100.01–109.99) and
// are never filled; crossing orders (BUY 100.00 or SELL 99.00, 0.05) fill against the maker at once.
// Each client keeps at most BENCH_ORDERS_DEPTH resting orders and cancels its oldest beyond that.
//
// Knobs: BENCH_ORDERS_CLIENTS (64), BENCH_ORDERS_MARKETS (2: clients split between them),
// BENCH_ORDERS_DURATION_MS (20000, measured), BENCH_ORDERS_WARMUP_MS (5000), BENCH_ORDERS_CROSS_PCT
// (20), BENCH_ORDERS_DEPTH (4), BENCH_ORDERS_HISTORY_TRADES (100000 settled trades per market before
// the load, so what grows with history is measured; 0: an empty market), BENCH_ORDERS_SPLIT_MS (4000:
// after the window, four kinds of signed request that stop at successive points of the order path,
// twice in turn, for the node's CPU per request up to each point; 0: skip), BENCH_ORDERS_PGBENCH_CLIENTS ("8,64"), BENCH_ORDERS_PGBENCH_SECONDS (5),
// BENCH_ORDERS_PROFILE=1 (a CPU profile of the node over the measured window, summarised and kept
// in bench/results/orders.cpuprofile), BENCH_ORDERS_NODE_VARS (extra SHARDLINE_* for the node,
// as JSON), BENCH_ORDERS_KEEP_DB=1 (leave the database for a look afterwards). Timing is reported,
// never asserted.
import { execFile } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { cpus, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect, Layer } from "effect"
import { Authorization, Grant } from "../schemas/exchange/authorization.ts"
import { devnetDollar } from "../src/chain/ledger/devnetFaucet.ts"
import { entityIdOf } from "../src/exchange/authorization/policy.ts"
import { MARKET_SHIFT } from "../src/exchange/markets/ids.ts"
import { AppConfig } from "../src/platform/Config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import { storageClient } from "../src/platform/ShardingSettings.ts"
import { configFrom, testMasterKey } from "../harness/config.ts"
import { randomLedgerKey } from "../harness/walletServices.ts"
import { adminUrl, createTestDatabase, type TestDatabase } from "../harness/db.ts"
import { createKey } from "../harness/keys.ts"
import { spawnNode, type NodeProcess } from "../harness/nodeProcess.ts"
import { signedQuery, type Key } from "../harness/signed.ts"
import { clusterRoundTrip } from "./parts/clusterRoundTrip.ts"
import { type CpuProfile, summarise } from "./parts/cpuProfile.ts"
import type { FundSend } from "./parts/orderNode.ts"
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
const keepDb = process.env.BENCH_ORDERS_KEEP_DB === "1"
const historyTrades = envInt("BENCH_ORDERS_HISTORY_TRADES", 100_000, 0)
const splitMs = envInt("BENCH_ORDERS_SPLIT_MS", 4_000, 0)
const extraNodeVars = JSON.parse(process.env.BENCH_ORDERS_NODE_VARS ?? "{}") as Record<string, string>

const prefix = "/api/public/v1"
const quote = { code: devnetDollar.code, property: devnetDollar.propertyId }
/** Whole tokens: supply issued per base asset, and what each user's delegated addresses get. */
const baseSupplyWhole = 100_000_000n
const userBaseWhole = 100_000n
const userQuoteWhole = 1_000_000n
const makerBaseWhole = 200_000n
const makerQuoteWhole = 20_000_000n
const makerQty = "100000"
const crossQty = "0.05"
const sats = (whole: bigint) => String(whole * 10n ** 8n)

// --- the node and its IPC ---

type Ipc = <A>(op: string, args?: Record<string, unknown>) => Promise<A>

const ipcOf = (node: NodeProcess): Ipc => {
  let next = 0
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  node.child.on("message", (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
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
      node.child.send({ id, op, ...args })
    })
}

// --- HTTP ---

interface Answer {
  readonly status: number
  readonly body: string
}

export const call = (agent: Agent, url: URL, method: "POST" | "DELETE" | "GET", path: string, key: Key) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, agent, headers: { "X-MBX-APIKEY": key.apiKey, ...(method === "POST" ? { "content-length": "0" } : {}) } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

export const signedPath = (path: string, key: Key, params: Record<string, string | number>) => `${prefix}${path}?${signedQuery(key, params)}`

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

type Kind = "rest" | "cross" | "cancel"

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
    Layer.provide(Layer.succeed(AppConfig, config))
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
    if (i > 600) throw new Error(`only ${rows.length} of ${grants.length} grants committed after 60 s`)
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
const historySql = (marketId: number, m: MarketSetup, trades: number) => trades === 0 ? "" : `
  INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id, buyer_user, seller_user, buyer_is_maker, time_ms)
    SELECT ${marketId} * ${MARKET_SHIFT}::bigint + g, ${marketId}, 10000, 5, 500000000, 1, 2, 1, 2, true, 0 FROM generate_series(1, ${trades}) g;
  INSERT INTO settlement_legs (trade_id, leg, asset, property_id, amount, grant_id, from_address, to_address, status, block_height)
    SELECT ${marketId} * ${MARKET_SHIFT}::bigint + g, v.leg, v.asset, v.property, 1000, 'history-' || v.leg || (g % 500),
      'history-' || v.leg || (g % 500), 'history-to', CASE WHEN g % 10 = 0 THEN 'recorded' ELSE 'final' END, CASE WHEN g % 10 = 0 THEN NULL ELSE 100 END
    FROM generate_series(1, ${trades}) g, (VALUES ('base', '${m.base}', ${m.baseProperty}), ('quote', '${quote.code}', ${quote.property})) v(leg, asset, property);`

export interface World {
  readonly node: NodeProcess
  readonly ipc: Ipc
  readonly markets: ReadonlyArray<MarketSetup>
  /** One user per client; client i trades on marketOfClient(i). */
  readonly users: ReadonlyArray<User>
  readonly marketOfClient: (i: number) => MarketSetup
  readonly grants: number
  readonly setupMs: number
}

/** Starts the node on `db` and sets up the markets and users the load needs (see the header). */
export const setupWorld = async (db: TestDatabase, nodeVars: Record<string, string> = extraNodeVars): Promise<World> => {
  const node = await spawnNode({
    SHARDLINE_TOPOLOGY: "single",
    SHARDLINE_DATABASE_URL: db.url,
    SHARDLINE_MASTER_KEY: testMasterKey,
    SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "1000000000",
    SHARDLINE_RATE_LIMIT_IP_WEIGHT: "1000000000",
    ...nodeVars
  }, { script: join(here, "parts", "orderNode.ts"), ipc: true })
  try {
    const ipc = ipcOf(node)
    const t0 = Date.now()

    // Markets: BXA/DUSD, BXB/DUSD, ... (one Omni property per base, issued from the faucet).
    const markets: Array<MarketSetup> = []
    for (let i = 0; i < marketCount; i++) {
      const base = `BX${String.fromCharCode(65 + i)}`
      const baseProperty = await ipc<number>("issue", { name: `Bench ${base}`, whole: String(baseSupplyWhole) })
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
        ${historySql(marketId, m, historyTrades)}
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
    await ipc<number>("fund", { sends })
    await untilFunded(node.baseUrl, [...users, ...makers], (u) => [marketOfUser.get(u.userId)!.base, quote.code])

    const url = new URL(node.baseUrl)
    const setupAgent = new Agent({ keepAlive: true, maxSockets: 4 })
    for (const [i, m] of markets.entries()) {
      for (const [side, price] of [["SELL", "100.00"], ["BUY", "99.00"]] as const) {
        const r = await call(setupAgent, url, "POST", signedPath("/order", makers[i]!, { symbol: m.symbol, side, type: "LIMIT", timeInForce: "GTC", price, quantity: makerQty }), makers[i]!)
        if (r.status !== 200) throw new Error(`maker order on ${m.symbol}: ${r.status} ${r.body}`)
      }
    }
    setupAgent.destroy()
    return { node, ipc, markets, users, marketOfClient, grants: grants.length, setupMs: Date.now() - t0 }
  } catch (e) {
    await stopNode(node)
    throw e
  }
}

export const stopNode = async (node: NodeProcess) => {
  node.child.kill("SIGTERM")
  await Promise.race([node.exited, new Promise((r) => setTimeout(r, 20_000))])
  await node.dispose()
  writeFileSync(nodeLog, node.output())
}

// --- the run ---

export const run = async (): Promise<void> => {
  const db = await createTestDatabase("benchorders")
  let node: NodeProcess | undefined
  try {
    const world = await setupWorld(db)
    node = world.node
    const { ipc, users, marketOfClient, setupMs } = world
    const url = new URL(node.baseUrl)
    // The node's CPU with no load (timers, the devnet clocks, the Omni view's follower, storage polls).
    await new Promise((r) => setTimeout(r, 1_000))
    const idleCpu0 = procCpuMs(node.pid)
    await new Promise((r) => setTimeout(r, 3_000))
    const idleCoresUsed = (procCpuMs(node.pid) - idleCpu0) / 3_000
    console.log(`orders bench: setup ${(setupMs / 1000).toFixed(1)} s (${marketCount} markets, ${clients} users + ${marketCount} makers, ${world.grants} grants funded on the devnet)`)

    // --- load ---
    const agent = new Agent({ keepAlive: true, maxSockets: clients })
    const latencies: Record<Kind, Array<number>> = { rest: [], cross: [], cancel: [] }
    const counts: Record<Kind, number> = { rest: 0, cross: 0, cancel: 0 }
    const errors = new Map<string, number>()
    const perSecond: Array<number> = []
    let measureStart = Infinity
    let measureEnd = Infinity
    const startAt = performance.now()
    const stopAt = startAt + warmupMs + durationMs
    const record = (kind: Kind, t0: number, t1: number, a: Answer | undefined) => {
      if (t0 < measureStart || t1 > measureEnd) return
      if (a === undefined || a.status !== 200) {
        let code = "network"
        if (a !== undefined) {
          try {
            code = `${a.status} ${(JSON.parse(a.body) as { code?: number }).code ?? "?"}`
          } catch {
            code = `${a.status}`
          }
        }
        const k = `${kind} ${code}`
        errors.set(k, (errors.get(k) ?? 0) + 1)
        return
      }
      counts[kind]++
      latencies[kind].push(t1 - t0)
      if (kind !== "cancel") {
        const s = Math.floor((t1 - measureStart) / 1000)
        perSecond[s] = (perSecond[s] ?? 0) + 1
      }
    }
    const tick = (n: number) => (n / 100).toFixed(2)
    const client = async (i: number) => {
      const key = users[i]!
      const symbol = marketOfClient(i).symbol
      const resting: Array<string> = []
      const rnd = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1))
      while (performance.now() < stopAt) {
        while (resting.length > depth && performance.now() < stopAt) {
          const orderId = resting.shift()!
          const t0 = performance.now()
          const a = await call(agent, url, "DELETE", signedPath("/order", key, { symbol, orderId }), key).catch(() => undefined)
          record("cancel", t0, performance.now(), a)
        }
        const crossing = Math.random() * 100 < crossPct
        const side = Math.random() < 0.5 ? "BUY" : "SELL"
        const price = crossing ? (side === "BUY" ? "100.00" : "99.00") : side === "BUY" ? tick(rnd(9000, 9899)) : tick(rnd(10001, 10999))
        const quantity = crossing ? crossQty : tick(rnd(5, 100))
        const kind: Kind = crossing ? "cross" : "rest"
        const t0 = performance.now()
        const a = await call(agent, url, "POST", signedPath("/order", key, { symbol, side, type: "LIMIT", timeInForce: "GTC", price, quantity }), key).catch(() => undefined)
        record(kind, t0, performance.now(), a)
        if (!crossing && a?.status === 200) resting.push((JSON.parse(a.body) as { orderId: string }).orderId)
      }
    }
    const workers = Promise.all(Array.from({ length: clients }, (_, i) => client(i)))
    await new Promise((r) => setTimeout(r, warmupMs))

    // The measured window.
    await ipc("batches", { reset: true })
    await ipc("loop", { reset: true })
    if (profile) await ipc("profileStart")
    const pgPids = (await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'shardline:%'`)).map((r) => r.pid)
    const pgCpu0 = pgPids.reduce((a, p) => a + procCpuMs(p), 0)
    const nodeCpu0 = procCpuMs(node.pid)
    const machine0 = machineCpu()
    const loadWin0 = process.cpuUsage()
    const xact0 = (await db.query<{ c: string }>(`SELECT xact_commit::text AS c FROM pg_stat_database WHERE datname = current_database()`))[0]!.c
    const wallStart = Date.now()
    measureStart = performance.now()
    measureEnd = measureStart + durationMs
    await new Promise((r) => setTimeout(r, durationMs))
    const wallEnd = Date.now()
    const nodeCpu1 = procCpuMs(node.pid)
    const pgCpu1 = pgPids.reduce((a, p) => a + procCpuMs(p), 0)
    const machine1 = machineCpu()
    const loadWin1 = process.cpuUsage(loadWin0)
    const xact1 = (await db.query<{ c: string }>(`SELECT xact_commit::text AS c FROM pg_stat_database WHERE datname = current_database()`))[0]!.c
    const profileFile = join(here, "results", "orders.cpuprofile")
    if (profile) await ipc("profileStop", { file: profileFile })
    const batches = await ipc<Array<BatchFigures & { symbol: string }>>("batches", { reset: true })
    const loop = await ipc<{ utilizationPct: number; lagP50Ms: number; lagP99Ms: number; lagMaxMs: number }>("loop", { reset: true })
    await workers
    agent.destroy()

    const seconds = durationMs / 1000
    const orders = counts.rest + counts.cross
    const errorCount = [...errors.values()].reduce((a, b) => a + b, 0)

    // --- the split: the same node answering requests that stop at successive points of the path ---
    const split: Array<Row> = []
    if (splitMs > 0) {
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
          const cpu0 = procCpuMs(node.pid)
          await Promise.all(users.map(async (key, i) => {
            const resting: Array<string> = []
            while (performance.now() < until) {
              const a = await f(key, i, resting).catch(() => undefined)
              n++
              if (a === undefined || (a.status !== 200 && !name.startsWith("2") && !name.startsWith("3"))) failed++
            }
          }))
          const cpu = procCpuMs(node.pid) - cpu0
          split.push({ requests: name, round, "per s": Math.round(n / (splitMs / 1000)), failed, "node CPU µs/request": Math.round((cpu * 1000) / Math.max(1, n)),
            "less CPU at rest": Math.round(((cpu - idleCoresUsed * splitMs) * 1000) / Math.max(1, n)) })
        }
      }
      splitAgent.destroy()
      const mixedCpu = nodeCpu1 - nodeCpu0
      split.unshift({ requests: "the mixed window above (rest, cross, cancel)", round: 0, "per s": Math.round((orders + counts.cancel) / seconds), failed: errorCount,
        "node CPU µs/request": Math.round((mixedCpu * 1000) / Math.max(1, orders + counts.cancel)),
        "less CPU at rest": Math.round(((mixedCpu - idleCoresUsed * durationMs) * 1000) / Math.max(1, orders + counts.cancel)) })
    }

    // --- settlement, from the database ---
    const legs = (await db.query<{ legs: string; signed: string; trades: string }>(`SELECT count(*)::text AS legs, count(l.txid)::text AS signed,
        count(DISTINCT l.trade_id)::text AS trades FROM settlement_legs l JOIN trades t USING (trade_id) WHERE t.time_ms >= $1 AND t.time_ms < $2`, [wallStart, wallEnd]))[0]!

    // --- figures ---
    const kindRows: Array<Row> = (["rest", "cross", "cancel"] as const).map((k) => {
      const sorted = latencies[k].slice().sort((a, b) => a - b)
      return { request: k === "rest" ? "POST /order (rests)" : k === "cross" ? "POST /order (crosses, fills)" : "DELETE /order", ok: counts[k], "per s": Math.round(counts[k] / seconds), "p50 ms": round(pct(sorted, 0.5)), "p95 ms": round(pct(sorted, 0.95)), "p99 ms": round(pct(sorted, 0.99)), "max ms": round(pct(sorted, 1)) }
    })
    const allOrders = [...latencies.rest, ...latencies.cross].sort((a, b) => a - b)
    const summary: Row = {
      clients,
      markets: marketCount,
      "seconds": seconds,
      "orders ack/s": Math.round(orders / seconds),
      "cancels/s": Math.round(counts.cancel / seconds),
      "requests/s": Math.round((orders + counts.cancel) / seconds),
      "order p50 ms": round(pct(allOrders, 0.5)),
      "order p99 ms": round(pct(allOrders, 0.99)),
      errors: errorCount,
      "trades/s": Math.round(Number(legs.trades) / seconds),
      "settlement tx/s": round(Number(legs.signed) / seconds),
      "legs recorded/s": Math.round(Number(legs.legs) / seconds)
    }
    const byMarket = new Map<string, Array<BatchFigures>>()
    for (const b of batches) byMarket.set(b.symbol, [...(byMarket.get(b.symbol) ?? []), b])
    const batchRows: Array<Row> = [...byMarket].map(([symbol, bs]) => {
      const sorted = (f: (b: BatchFigures) => number) => bs.map(f).sort((a, b) => a - b)
      const size = sorted((b) => b.commands)
      const tx = sorted((b) => b.txMs)
      const busy = bs.reduce((a, b) => a + b.totalMs, 0)
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
        "loop busy %": round((100 * busy) / durationMs, 1)
      }
    })
    const cores = cpus().length
    const machineBusy = machine1.busyMs - machine0.busyMs
    const cpuRows: Array<Row> = [
      { process: "node (HTTP + entities)", "CPU ms": Math.round(nodeCpu1 - nodeCpu0), "cores used": round((nodeCpu1 - nodeCpu0) / durationMs), "µs per order": Math.round(((nodeCpu1 - nodeCpu0) * 1000) / Math.max(1, orders)), "µs per request": Math.round(((nodeCpu1 - nodeCpu0) * 1000) / Math.max(1, orders + counts.cancel)) },
      { process: "node at rest before the load (3 s)", "CPU ms": Math.round(idleCoresUsed * durationMs), "cores used": round(idleCoresUsed), "µs per order": "", "µs per request": "" },
      { process: `postgres backends of the node (${pgPids.length})`, "CPU ms": Math.round(pgCpu1 - pgCpu0), "cores used": round((pgCpu1 - pgCpu0) / durationMs), "µs per order": Math.round(((pgCpu1 - pgCpu0) * 1000) / Math.max(1, orders)), "µs per request": Math.round(((pgCpu1 - pgCpu0) * 1000) / Math.max(1, orders + counts.cancel)) },
      { process: "load generator (this process)", "CPU ms": Math.round((loadWin1.user + loadWin1.system) / 1000), "cores used": round((loadWin1.user + loadWin1.system) / 1000 / durationMs), "µs per order": Math.round((loadWin1.user + loadWin1.system) / Math.max(1, orders)), "µs per request": Math.round((loadWin1.user + loadWin1.system) / Math.max(1, orders + counts.cancel)) },
      { process: `whole machine (${cores} cores)`, "CPU ms": Math.round(machineBusy), "cores used": round(machineBusy / durationMs), "µs per order": Math.round((machineBusy * 1000) / Math.max(1, orders)), "µs per request": Math.round((machineBusy * 1000) / Math.max(1, orders + counts.cancel)) }
    ]
    const dbRows: Array<Row> = [{ "commits/s (bench db)": Math.round((Number(xact1) - Number(xact0)) / seconds) }]

    // The node is stopped before pgbench runs, so the ceiling is the database's alone.
    await stopNode(node)
    const logLines = node.output().split("\n")
    const warnings = logLines.filter((l) => / (WARN|ERROR) \(/.test(l)).length
    node = undefined
    const roundTrip = splitMs > 0 ? await clusterRoundTrip(clients, Math.min(splitMs, 3_000)) : []
    const pgbench = await pgbenchCeiling()

    console.log(`\norders bench: ${clients} clients, ${warmupMs} ms warmup + ${durationMs} ms measured; ${100 - crossPct}% rest then cancel, ${crossPct}% cross; depth ${depth}; ${historyTrades} trades of history per market; goal >= 5000 orders/s, p99 < 50 ms`)
    printTable("Summary", [summary])
    printTable("Latency by request (measured window)", kindRows)
    if (errors.size > 0) printTable("Errors by request and code", [...errors].map(([k, n]) => ({ "request status code": k, count: n })))
    printTable("Market entity batches (means per batch; commit = transaction time not in read/match/write)", batchRows)
    printTable("The node's event loop over the measured window (utilization; delay of a 5 ms timer)", [{ "utilization %": loop.utilizationPct, "delay p50 ms": loop.lagP50Ms, "delay p99 ms": loop.lagP99Ms, "delay max ms": loop.lagMaxMs }])
    printTable("CPU over the measured window", cpuRows)
    printTable("Postgres", dbRows)
    if (split.length > 0) printTable(`Node CPU per request along the order path (${splitMs} ms per case, right after the window; includes the node's CPU at rest)`, split)
    console.log(`\nnode log: ${nodeLog} (${logLines.length} lines, ${warnings} warnings or errors)`)
    printTable("Cluster messaging alone: a Market Place round trip in this process (node stopped), no HTTP, no SQL", roundTrip)
    printTable("Postgres single-row INSERT ceiling (same server, node stopped)", pgbench)
    let profileSummary: ReturnType<typeof summarise> | undefined
    if (profile) {
      profileSummary = summarise(JSON.parse(readFileSync(profileFile, "utf8")) as CpuProfile, 30)
      printTable(`Node CPU profile by group (self time, ${profileSummary.totalMs} ms sampled over ${durationMs} ms)`, profileSummary.byGroup)
      printTable("Node CPU profile by area (self time)", profileSummary.byArea)
      printTable("Node CPU profile: top functions (self time)", profileSummary.byFunction)
      console.log(`\nprofile: ${profileFile} (open in Chrome DevTools or speedscope)`)
    }
    writeResults("orders", {
      clients, markets: marketCount, warmupMs, durationMs, crossPct, depth, historyTrades, cpus: cores, loadAverage: readFileSync("/proc/loadavg", "utf8").trim(),
      summary, latency: kindRows, errors: Object.fromEntries(errors), batches: batchRows, eventLoop: loop, cpu: cpuRows, split, clusterRoundTrip: roundTrip, postgres: dbRows, pgbench,
      ordersPerSecond: perSecond, settlement: { legs: Number(legs.legs), signedLegs: Number(legs.signed), trades: Number(legs.trades) },
      profile: profileSummary === undefined ? undefined : { byGroup: profileSummary.byGroup, byArea: profileSummary.byArea, byFunction: profileSummary.byFunction }
    })
  } finally {
    if (node !== undefined) await stopNode(node)
    if (keepDb) console.log(`kept database ${db.name} (BENCH_ORDERS_KEEP_DB)`)
    else await db.drop()
  }
}
