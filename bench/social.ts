// `npm run bench -- social`: 1 MB ranged reads from /api/stream/{cid} (the verified content store,
// through the whole social listener) against a bare node:http server streaming the same bytes
// from a file on disk, and post lookup (/api/public/post/{id}) against a bare server answering the
// same JSON; same loopback load, same run. Goal (issue 14): ours ≥ 0.6× bare on both. Writes
// bench/results/social.json. Timing is reported, never asserted.
//
// A second node on the same database with its verified-chunk cache off
// (SHARDLINE_SOCIAL_CHUNK_CACHE_BYTES=0) measures the cold path: every range read from Postgres
// and hashed against the chunk digests, through the Effect handler.
//
// Knobs: BENCH_SOCIAL_CONCURRENCY (workers, default 8), BENCH_SOCIAL_DURATION_MS (per case, 5000),
// BENCH_SOCIAL_WARMUP_MS (1000), BENCH_SOCIAL_STORE (postgres | filesystem, default postgres).
import { spawn, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createReadStream, mkdtempSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createTestDatabase } from "../harness/db.ts"
import { testMasterKey } from "../harness/config.ts"
import { spawnNode } from "../harness/nodeProcess.ts"
import { freePort } from "../harness/ports.ts"
import { runWithDatabase } from "../harness/withDatabase.ts"
import { createAccount } from "../src/social/accounts/Accounts.ts"
import { mintSession } from "../src/platform/signin/sessionStore.ts"
import { parseRange } from "../src/social/content/ranges.ts"
import { load, type Target } from "./parts/httpLoad.ts"
import { envInt, printTable, writeResults, type Row } from "./report.ts"

const concurrency = envInt("BENCH_SOCIAL_CONCURRENCY", 8)
const durationMs = envInt("BENCH_SOCIAL_DURATION_MS", 5_000)
const warmupMs = envInt("BENCH_SOCIAL_WARMUP_MS", 1_000)
const store = process.env.BENCH_SOCIAL_STORE === "filesystem" ? "filesystem" : "postgres"
/** The media item: 8 MB, read 1 MB at a time at random offsets. */
const fileBytes = 8 * 1024 * 1024
const readBytes = 1024 * 1024

// --- the bare server (its own process): the file from disk with single ranges, and the lookup JSON ---

const serveBare = (port: number, file: string, mediaType: string, etag: string, lookupPath: string, lookupBody: string) => {
  const size = statSync(file).size
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0]
    if (path === lookupPath) {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(lookupBody) })
      res.end(lookupBody)
      return
    }
    const range = parseRange(req.headers.range, size)
    const r = range._tag === "Partial" ? range.ranges[0]! : { start: 0, end: size - 1 }
    res.writeHead(range._tag === "Partial" ? 206 : 200, {
      "content-type": mediaType, "content-length": r.end - r.start + 1, etag, "accept-ranges": "bytes",
      ...(range._tag === "Partial" ? { "content-range": `bytes ${r.start}-${r.end}/${size}` } : {})
    })
    createReadStream(file, { start: r.start, end: r.end }).pipe(res)
  })
  server.keepAliveTimeout = 60_000
  server.listen(port, "127.0.0.1")
}

const startBare = async (args: Record<string, string>): Promise<{ baseUrl: string; child: ChildProcess; pid: number }> => {
  const port = await freePort()
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--bare-server"], {
    env: { ...process.env, BENCH_BARE_PORT: String(port), BENCH_BARE_ARGS: JSON.stringify(args) },
    stdio: ["ignore", "inherit", "inherit"]
  })
  const baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}${args.lookupPath}`)).status === 200) return { baseUrl, child, pid: child.pid! }
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error("bare server did not start")
    await new Promise((r) => setTimeout(r, 100))
  }
}

const randomRange = () => {
  const start = Math.floor(Math.random() * (fileBytes - readBytes))
  return `bytes=${start}-${start + readBytes - 1}`
}

export const run = async (): Promise<void> => {
  const db = await createTestDatabase("benchsocial")
  const socialPort = await freePort()
  const nodeVars = {
    SHARDLINE_DATABASE_URL: db.url,
    SHARDLINE_MASTER_KEY: testMasterKey,
    SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "1000000000",
    SHARDLINE_SOCIAL_CONTENT_STORE: store
  }
  const node = await spawnNode({ ...nodeVars, SHARDLINE_SOCIAL_HTTP_PORT: String(socialPort) })
  let bare: { baseUrl: string; child: ChildProcess; pid: number } | undefined
  let cold: Awaited<ReturnType<typeof spawnNode>> | undefined
  try {
    const socialUrl = `http://127.0.0.1:${socialPort}`
    const account = await runWithDatabase(db.url, createAccount(undefined))
    const session = (await runWithDatabase(db.url, mintSession("social", account.address))).token
    const bytes = randomBytes(fileBytes)
    const up = await fetch(`${socialUrl}/api/social/upload`, { method: "POST", headers: { authorization: `Bearer ${session}`, "content-type": "video/mp4" }, body: bytes })
    const { cid } = (await up.json()) as { cid: string }
    const posted = await fetch(`${socialUrl}/api/social/posts`, {
      method: "POST", headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
      body: JSON.stringify({ body: "bench post", media: [cid] })
    })
    const { shortId } = (await posted.json()) as { shortId: string }
    const lookupPath = `/api/public/post/${shortId}`
    const lookupBody = await (await fetch(`${socialUrl}${lookupPath}`)).text()
    const file = join(mkdtempSync(join(tmpdir(), "sl-bench-social-")), "media.bin")
    writeFileSync(file, bytes)
    bare = await startBare({ file, mediaType: "video/mp4", etag: `"${cid}"`, lookupPath, lookupBody })

    // The filesystem store is one node's own directory: the cold node exists for postgres only.
    const coldPort = await freePort()
    if (store === "postgres") cold = await spawnNode({ ...nodeVars, SHARDLINE_SOCIAL_HTTP_PORT: String(coldPort), SHARDLINE_SOCIAL_CHUNK_CACHE_BYTES: "0" })

    const streamPath = `/api/stream/${cid}`
    const cases: Array<{ endpoint: string; path: string; ranged: boolean; node: typeof node }> = [
      { endpoint: "GET /api/stream (1 MB range)", path: streamPath, ranged: true, node },
      ...(cold === undefined ? [] : [{ endpoint: "GET /api/stream (1 MB range, cold: chunk cache off)", path: streamPath, ranged: true, node: cold }]),
      { endpoint: "GET /api/public/post/{id}", path: lookupPath, ranged: false, node }
    ]
    console.log(`social bench: ${concurrency} keep-alive workers, ${warmupMs} ms warmup + ${durationMs} ms per case, loopback, ${store} content store`)
    const rows: Array<Row> = []
    for (const c of cases) {
      const next = () => ({ path: c.path, headers: c.ranged ? { range: randomRange() } : {} })
      const options = { concurrency, durationMs, warmupMs, okStatus: c.ranged ? 206 : 200 }
      const port = c.node === node ? socialPort : coldPort
      const oursTarget: Target = { baseUrl: `http://127.0.0.1:${port}`, pid: c.node.pid, next }
      const ours = await load(oursTarget, options)
      const theirs = await load({ ...oursTarget, baseUrl: bare.baseUrl, pid: bare.pid }, options)
      for (const [server, m] of [["shardline", ours], ["bare node:http", theirs]] as const) {
        rows.push({
          endpoint: c.endpoint,
          server,
          requests: m.requests,
          errors: m.errors,
          "req/s": Math.round(m.rps),
          "MB/s": Number((m.bytesPerSec / 1e6).toFixed(1)),
          "p50 ms": Number(m.p50Ms.toFixed(2)),
          "p99 ms": Number(m.p99Ms.toFixed(2)),
          "CPU µs/req": Math.round(m.cpuUsPerRequest),
          "ours/bare": server === "shardline" ? Number((ours.rps / theirs.rps).toFixed(3)) : ""
        })
      }
    }
    printTable("Social: ours vs bare node:http on the same bytes (goal: ≥ 0.6× on both)", rows)
    writeResults("social", { concurrency, durationMs, warmupMs, store, fileBytes, readBytes, cpus: cpus().length, rows })
  } finally {
    bare?.child.kill("SIGTERM")
    cold?.child.kill("SIGTERM")
    node.child.kill("SIGTERM")
    await Promise.race([node.exited, new Promise((r) => setTimeout(r, 20_000))])
    await node.dispose()
    await cold?.dispose()
    await db.drop()
  }
}

if (process.argv.includes("--bare-server") && process.argv[1] === fileURLToPath(import.meta.url)) {
  const a = JSON.parse(process.env.BENCH_BARE_ARGS ?? "{}") as Record<string, string>
  serveBare(Number(process.env.BENCH_BARE_PORT), a.file!, a.mediaType!, a.etag!, a.lookupPath!, a.lookupBody!)
}
