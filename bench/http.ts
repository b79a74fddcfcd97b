// `npm run bench -- http`: GET /api/public/v1/time and signed GET /api/public/v1/account through
// the full stack (a real node process: HTTP, middleware, rate limits in Postgres, signature check,
// account read), against a bare node:http server answering the same bytes, under the same
// loopback load, and the signed read once more on a node exporting traces at 1% head sampling.
// Prints and writes requests/s, p50, p99 and the ratio ours/bare per case.
//
// Knobs: BENCH_HTTP_CONCURRENCY (workers, default 16), BENCH_HTTP_DURATION_MS (per case, 5000),
// BENCH_HTTP_WARMUP_MS (per case, 1000). Timing is reported, never asserted.
import { spawn, type ChildProcess } from "node:child_process"
import { createServer, type IncomingHttpHeaders } from "node:http"
import { cpus } from "node:os"
import { fileURLToPath } from "node:url"
import { createTestDatabase } from "../harness/db.ts"
import { createKey } from "../harness/keys.ts"
import { testMasterKey } from "../harness/config.ts"
import { spawnNode } from "../harness/nodeProcess.ts"
import { freePort } from "../harness/ports.ts"
import { signedQuery, type Key } from "../harness/signed.ts"
import { envInt, printTable, writeResults, type Row } from "./report.ts"
import { load as loadWith, type Target } from "./parts/httpLoad.ts"

const concurrency = envInt("BENCH_HTTP_CONCURRENCY", 16)
const durationMs = envInt("BENCH_HTTP_DURATION_MS", 5_000)
const warmupMs = envInt("BENCH_HTTP_WARMUP_MS", 1_000)
/** The head-sampling ratio of the traced node (issue 26: "the loss with 1% sampling"). */
const tracedRatio = 0.01
/** How long a server may take to answer its first request. */
const startTimeoutMs = 60_000

const timePath = "/api/public/v1/time"
const pingPath = "/api/public/v1/ping"
const accountPath = "/api/public/v1/account"
/** Headers node:http writes itself; everything else is copied byte for byte. */
const transportHeaders = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"])

/** What the bare server answers on one path (or one path and query): our captured status, headers and body. */
export interface Canned {
  readonly status: number
  readonly headers: Record<string, string>
  /** null: a fresh `{"serverTime":<now>}` per request, as /time does. */
  readonly body: string | null
}
export type BareSpec = Record<string, Canned>

// --- the bare server (runs as its own process, like the node, so neither shares the load generator's CPU) ---

const serveBare = (port: number, spec: BareSpec) => {
  const server = createServer((req, res) => {
    // By the whole URL when the spec names it (one path, several queries), else by path.
    const canned = spec[req.url ?? ""] ?? spec[(req.url ?? "").split("?")[0]!]
    if (!canned) {
      res.writeHead(404).end()
      return
    }
    const body = canned.body ?? JSON.stringify({ serverTime: Date.now() })
    res.writeHead(canned.status, { ...canned.headers, "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  server.keepAliveTimeout = 60_000
  server.listen(port, "127.0.0.1")
}

/** The bare server in its own process; ready once `readyPath` (one of the spec's) answers 200. */
export const startBare = async (spec: BareSpec, readyPath = timePath): Promise<{ baseUrl: string; child: ChildProcess; pid: number }> => {
  const port = await freePort()
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--bare-server"], {
    env: { ...process.env, BENCH_BARE_PORT: String(port), BENCH_BARE_SPEC: JSON.stringify(spec) },
    stdio: ["ignore", "inherit", "inherit"]
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + startTimeoutMs
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}${readyPath}`)).status === 200) return { baseUrl, child, pid: child.pid! }
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error("bare server did not start")
    await new Promise((r) => setTimeout(r, 100))
  }
}

export const load = (target: Target) => loadWith(target, { concurrency, durationMs, warmupMs })

// --- the run ---

export const capture = async (baseUrl: string, path: string, headers: Record<string, string>, fresh: boolean): Promise<Canned> => {
  const res = await fetch(`${baseUrl}${path}`, { headers })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${body}`)
  const kept: IncomingHttpHeaders = {}
  res.headers.forEach((v, k) => {
    if (!transportHeaders.has(k)) kept[k] = v
  })
  return { status: res.status, headers: kept as Record<string, string>, body: fresh ? null : body }
}

/** The bare server must answer what we answer: status, header names and values, body shape. */
export const sameBytes = async (ours: string, bare: string, path: string, headers: Record<string, string>) => {
  const [a, b] = await Promise.all([fetch(`${ours}${path}`, { headers }), fetch(`${bare}${path}`, { headers })])
  const shape = async (r: Response) => ({
    status: r.status,
    headers: [...r.headers.keys()].filter((k) => k !== "date").sort(),
    contentType: r.headers.get("content-type"),
    // /time differs only in the clock's digits
    body: (await r.text()).replace(/\d{13}/g, "<ms>")
  })
  const [x, y] = [await shape(a), await shape(b)]
  if (JSON.stringify(x) !== JSON.stringify(y)) {
    throw new Error(`bare server differs from ours on ${path}:\n${JSON.stringify(x)}\n${JSON.stringify(y)}`)
  }
}

const signedAccount = (key: Key) => () => ({
  path: `${accountPath}?${signedQuery(key, {})}`,
  headers: { "X-MBX-APIKEY": key.apiKey }
})

export const nodeVars = (db: string, fastLane: boolean) => ({
  SHARDLINE_TOPOLOGY: "single",
  SHARDLINE_DATABASE_URL: db,
  SHARDLINE_MASTER_KEY: testMasterKey,
  SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "100000000",
  SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100000000",
  SHARDLINE_HTTP_FAST_LANE: String(fastLane)
})

export const run = async (): Promise<void> => {
  const db = await createTestDatabase("benchhttp")
  // Each node on a database of its own: single runners sharing one database take each other's
  // shard locks, and the shard watchdog stops a single runner that keeps fewer than all of them.
  const ownDbs = [await createTestDatabase("benchhttp_effect"), await createTestDatabase("benchhttp_traced")]
  const children: Array<{ stop: () => Promise<void> }> = []
  const spawnStoppable = async (fastLane: boolean, extra: Record<string, string> = {}, databaseUrl = db.url) => {
    const node = await spawnNode({ ...nodeVars(databaseUrl, fastLane), ...extra })
    children.push({
      stop: async () => {
        node.child.kill("SIGTERM")
        await Promise.race([node.exited, new Promise((r) => setTimeout(r, 20_000))])
        await node.dispose()
      }
    })
    return node
  }
  try {
    // Two nodes on one database: the default (fast lane on) and one with every request through Effect.
    const node = await spawnStoppable(true)
    const effectOnly = await spawnStoppable(false, {}, ownDbs[0]!.url)
    // A third node exporting traces (1% head sampling) to a sink in this process that takes OTLP
    // batches and drops them: what tracing costs when on, beside the same node with it unset.
    const sink = createServer((req, res) => {
      req.resume()
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
    })
    const sinkPort = await freePort()
    await new Promise<void>((r) => sink.listen(sinkPort, "127.0.0.1", () => r()))
    children.push({ stop: () => new Promise<void>((r) => sink.close(() => r())) })
    const traced = await spawnStoppable(true, {
      SHARDLINE_OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
      SHARDLINE_OTEL_SAMPLE_RATIO: String(tracedRatio)
    }, ownDbs[1]!.url)
    const tracedSign = signedAccount(await createKey(ownDbs[1]!.url, { scopes: ["read"] }))
    const key = await createKey(db.url, { scopes: ["read"] })
    const sign = signedAccount(key)
    const spec: BareSpec = {
      [pingPath]: await capture(node.baseUrl, pingPath, {}, false),
      [timePath]: await capture(node.baseUrl, timePath, {}, true),
      [accountPath]: await capture(node.baseUrl, sign().path, { "X-MBX-APIKEY": key.apiKey }, false)
    }
    const bare = await startBare(spec)
    children.push({
      stop: () => new Promise<void>((resolve) => {
        if (bare.child.exitCode !== null) return resolve()
        bare.child.once("exit", () => resolve())
        bare.child.kill("SIGTERM")
      })
    })

    for (const n of [node, effectOnly]) {
      await sameBytes(n.baseUrl, bare.baseUrl, pingPath, {})
      await sameBytes(n.baseUrl, bare.baseUrl, timePath, {})
    }
    const probe = sign()
    await sameBytes(node.baseUrl, bare.baseUrl, probe.path, { "X-MBX-APIKEY": key.apiKey })

    const plain = (path: string) => () => ({ path, headers: {} })
    const cases = [
      { endpoint: "GET /ping (fast lane)", ours: { baseUrl: node.baseUrl, pid: node.pid, next: plain(pingPath) } },
      { endpoint: "GET /time (fast lane)", ours: { baseUrl: node.baseUrl, pid: node.pid, next: plain(timePath) } },
      { endpoint: "GET /time (Effect path)", ours: { baseUrl: effectOnly.baseUrl, pid: effectOnly.pid, next: plain(timePath) } },
      { endpoint: "GET /account (signed)", ours: { baseUrl: node.baseUrl, pid: node.pid, next: sign } },
      { endpoint: `GET /account (signed, traces ${tracedRatio * 100}%)`, ours: { baseUrl: traced.baseUrl, pid: traced.pid, next: tracedSign } }
    ]
    console.log(`http bench: ${concurrency} keep-alive workers, ${warmupMs} ms warmup + ${durationMs} ms per case, loopback`)
    const rows: Array<Row> = []
    for (const c of cases) {
      const ours = await load(c.ours)
      const theirs = await load({ ...c.ours, baseUrl: bare.baseUrl, pid: bare.pid })
      for (const [server, m] of [["shardline", ours], ["bare node:http", theirs]] as const) {
        rows.push({
          endpoint: c.endpoint,
          server,
          workers: concurrency,
          requests: m.requests,
          errors: m.errors,
          "req/s": Math.round(m.rps),
          "p50 ms": Number(m.p50Ms.toFixed(2)),
          "p99 ms": Number(m.p99Ms.toFixed(2)),
          "CPU µs/req": Math.round(m.cpuUsPerRequest),
          "req/s ours/bare": server === "shardline" ? Number((ours.rps / theirs.rps).toFixed(3)) : "",
          "CPU bare/ours": server === "shardline" ? Number((theirs.cpuUsPerRequest / ours.cpuUsPerRequest).toFixed(3)) : ""
        })
      }
    }
    printTable("HTTP: ours vs bare node:http answering the same bytes (goals: fast lane >= 0.6x, signed account >= 0.15x)", rows)
    writeResults("http", { concurrency, durationMs, warmupMs, cpus: cpus().length, rows })
  } finally {
    for (const c of children.reverse()) await c.stop()
    await db.drop()
    for (const d of ownDbs) await d.drop()
  }
}

if (process.argv.includes("--bare-server") && process.argv[1] === fileURLToPath(import.meta.url)) {
  serveBare(Number(process.env.BENCH_BARE_PORT), JSON.parse(process.env.BENCH_BARE_SPEC ?? "{}") as BareSpec)
}
