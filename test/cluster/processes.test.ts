// More than one process per node (SHARDLINE_PROCESSES, cluster/Primary.ts). `npm start` with two
// processes on the embedded default: the primary starts the one Postgres and hands connections on
// the node's ports round-robin; each process is a runner of its own (runner port + index) and
// holds shards; /metrics answers for both; SIGTERM drains both and stops the database. Where the
// processes could not share (PGlite, in-process devnets) the node refuses with one line.
import { mkdtempSync, rmSync } from "node:fs"
import { get } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runNodeToExit, spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { readDiscovery } from "../../src/platform/database/embedded/discovery.ts"
import { waitFor } from "../support/waitFor.ts"

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** GET on a connection of its own (no keep-alive), so the primary hands each to the next process. */
const getOnce = (url: string) =>
  new Promise<number>((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    }).on("error", reject)
  })

/** Sum of a metric's samples per `process` label, over the samples whose line matches `filter`. */
const perProcess = (text: string, metric: string, filter: RegExp = /./) => {
  const out = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${metric}{`) || !filter.test(line)) continue
    const p = /process="(\d+)"/.exec(line)?.[1]
    if (p !== undefined) out.set(p, (out.get(p) ?? 0) + Number(line.split(" ").at(-1)))
  }
  return out
}

/** A refusal comes before anything starts, but tsx compiling on a loaded machine took 42 s. */
const startMs = 180_000

let node: NodeProcess | undefined
let dataDir: string | undefined
afterAll(async () => {
  await node?.dispose()
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
})

describe("SHARDLINE_PROCESSES", () => {
  it("refuses with one line where the processes could not share: PGlite as the embedded database, in-process devnet chains", async () => {
    const [pglite, devnet, ports] = await Promise.all([
      runNodeToExit({ SHARDLINE_PROCESSES: "2", SHARDLINE_EMBEDDED_ENGINE: "pglite" }, startMs),
      runNodeToExit({ SHARDLINE_PROCESSES: "2", SHARDLINE_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/none" }, startMs),
      runNodeToExit({ SHARDLINE_PROCESSES: "3", SHARDLINE_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/none", SHARDLINE_DEVNET_PER_NODE: "true", SHARDLINE_RUNNER_PORT: "65534" }, startMs)
    ])
    expect(pglite.code, pglite.output).toBe(1)
    expect(pglite.output).toMatch(/SHARDLINE_PROCESSES.*PostgreSQL server they all share.*PGlite cannot/)
    expect(devnet.code, devnet.output).toBe(1)
    expect(devnet.output).toMatch(/SHARDLINE_PROCESSES.*runner of its own.*in-process devnet/)
    expect(ports.code, ports.output).toBe(1)
    expect(ports.output).toMatch(/SHARDLINE_PROCESSES.*65534 to 65536.*past 65535/)
    // Refused before anything started: no embedded database, no worker.
    expect(pglite.output).not.toMatch(/is up, pid/)
  }, 240_000)

  it("runs two runners behind one port on the embedded default: both hold shards, both answer, SIGTERM drains both", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sl-procs-"))
    // The embedded default: no database URL, no master key (the primary starts Postgres under the
    // data dir and reads the key file there); a devnet per process is accepted for this test.
    node = await spawnNode({ SHARDLINE_PROCESSES: "2", SHARDLINE_DATA_DIR: dataDir }, { startTimeoutMs: 180_000 })
    expect(node.runnerNames).toHaveLength(2)
    const pids = node.runnerNames.map((n) => node!.runnerPid(n)!)
    expect(new Set([node.pid, ...pids]).size).toBe(3)
    const db = readDiscovery(dataDir)
    expect(db?.kind).toBe("postgres")
    expect(db?.pid, "the primary owns the embedded database").toBe(node.pid)

    // Shards spread over the two processes as over two nodes: each holds some, 300 in all.
    const metrics = () => fetch(`${node!.baseUrl}/metrics`).then((r) => r.text())
    const owned = await waitFor("both processes holding shards, 300 in all", 90_000, async () => {
      const o = perProcess(await metrics(), "shardline_shards_owned")
      return (o.get("0") ?? 0) > 0 && (o.get("1") ?? 0) > 0 && (o.get("0") ?? 0) + (o.get("1") ?? 0) === 300 ? o : undefined
    }, 1_000)
    console.log(`processes: shards ${owned.get("0")} + ${owned.get("1")}`)

    // Both answer on the node's one port: 20 requests on 20 connections reach both processes.
    const before = perProcess(await metrics(), "shardline_http_requests_total", /route="\/api\/public\/v1\/ping"/)
    const statuses = []
    for (let i = 0; i < 20; i++) statuses.push(await getOnce(`${node.baseUrl}/api/public/v1/ping`))
    expect(statuses.every((s) => s === 200), statuses.join(",")).toBe(true)
    const after = perProcess(await metrics(), "shardline_http_requests_total", /route="\/api\/public\/v1\/ping"/)
    const served = ["0", "1"].map((p) => (after.get(p) ?? 0) - (before.get(p) ?? 0))
    console.log(`processes: pings served ${served.join(" + ")}`)
    expect(served[0]).toBeGreaterThan(0)
    expect(served[1]).toBeGreaterThan(0)
    expect(served[0]! + served[1]!).toBe(20)
    // The desk's and the social listeners are shared the same way.
    expect(await getOnce(`${node.deskUrl}/openapi.json`)).toBe(200)
    expect(await getOnce(`${node.socialUrl}/openapi.json`)).toBe(200)

    // SIGTERM to the primary: both processes drain and exit, then the database stops; exit 0.
    node.child.kill("SIGTERM")
    const exit = await node.exited
    expect(exit.code, node.output().slice(-3_000)).toBe(0)
    for (const pid of pids) expect(isAlive(pid), `process ${pid}`).toBe(false)
    await waitFor("the embedded postmaster gone", 10_000, async () => (isAlive(db!.serverPid) ? undefined : true))
    expect(node.output()).not.toMatch(/not stopped \d+ ms after the signal/)
  }, 300_000)
})
