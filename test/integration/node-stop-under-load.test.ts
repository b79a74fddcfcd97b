// A node stops under load (issue 23, point 18). With 32 connections sending orders and cancels
// (each goes through the Market entity), SIGTERM drains: requests already in flight are answered,
// new ones get a 503 in the exchange's shape with `Connection: close`, and the process exits by
// itself, code 0, well inside SHARDLINE_STOP_TIMEOUT_MS: as `npm start` (embedded Postgres, which
// must be stopped too) and as a cluster node (socket topology, shared Postgres). A node killed -9
// does not leave its embedded postmaster behind: the watchdog stops it.
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { testMasterKey } from "../../harness/config.ts"
import { createTestDatabase } from "../../harness/db.ts"
import { spawnNode } from "../../harness/nodeProcess.ts"
import { freePort } from "../../harness/ports.ts"
import { signedQuery, type Key } from "../../harness/signed.ts"
import { isAlive } from "../../src/platform/database/embedded/processes.ts"
import { cli, cliJson } from "../support/cli.ts"

const CONNECTIONS = 32
const STOP_TIMEOUT_MS = 20_000
/** The load is far above the default budgets: they are not what this test is about. */
const budgets = { SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100000000", SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "100000000" }
const dirs: Array<string> = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const postgresUnder = (dir: string): Array<number> =>
  readdirSync("/proc").filter((e) => /^\d+$/.test(e)).flatMap((e) => {
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8")
      return cmd.includes("postgres") && cmd.includes(dir) && !cmd.includes("node") ? [Number(e)] : []
    } catch {
      return [] // gone meanwhile
    }
  })

interface Answer {
  readonly status: number
  readonly body: string
  readonly connection: string | null
}

/** 32 loops of order + cancel until the node stops answering; every answer it gave. */
const orderLoad = (baseUrl: string, key: Key) => {
  let stop = false
  const answers: Array<Answer> = []
  const loop = async (i: number) => {
    for (let n = 0; !stop; n++) {
      try {
        const place = n % 2 === 0
        const params: Record<string, string> = place
          ? { symbol: "SHRDDUSD", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "1", newClientOrderId: `c${i}-${n}` }
          : { symbol: "SHRDDUSD", origClientOrderId: `c${i}-${n - 1}` }
        const res = await fetch(`${baseUrl}/api/public/v1/order?${signedQuery(key, params)}`, { method: place ? "POST" : "DELETE", headers: { "X-MBX-APIKEY": key.apiKey } })
        answers.push({ status: res.status, body: await res.text(), connection: res.headers.get("connection") })
      } catch {
        // The listener is closed: the node no longer takes connections.
        await new Promise((r) => setTimeout(r, 20))
      }
    }
  }
  const loops = Array.from({ length: CONNECTIONS }, (_, i) => loop(i))
  /**
   * Requests sent at set times after the signal, each on a connection of its own: the loops alone
   * may all sit between two requests through a short drain when the test process is starved (CI's
   * loaded box: no request reached the node while it drained, so no 503 was seen). A probe that
   * lands before the signal is handled is an ordinary order; one that lands during the drain gets
   * the 503; one after the close finds no listener.
   */
  const probes: Array<Promise<void>> = []
  const probeAfterSignal = () => {
    for (const [n, delayMs] of [0, 10, 25, 50, 100, 200, 400].entries()) {
      probes.push(new Promise<void>((r) => setTimeout(r, delayMs)).then(async () => {
        const params = { symbol: "SHRDDUSD", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "1", newClientOrderId: `probe-${n}` }
        const res = await fetch(`${baseUrl}/api/public/v1/order?${signedQuery(key, params)}`, { method: "POST", headers: { "X-MBX-APIKEY": key.apiKey, connection: "close" } })
        answers.push({ status: res.status, body: await res.text(), connection: res.headers.get("connection") })
      }).catch(() => undefined))
    }
  }
  return { answers, probeAfterSignal, end: async () => { stop = true; await Promise.all([...loops, ...probes]) } }
}

/** What every answer must be: the exchange's shape; a refusal while stopping says so and closes. */
const expectWellFormed = (answers: ReadonlyArray<Answer>) => {
  expect(answers.length).toBeGreaterThan(CONNECTIONS)
  for (const a of answers) {
    const body = JSON.parse(a.body) as { code?: number; msg?: string }
    if (a.status === 503) {
      expect(body).toEqual({ code: -1001, msg: "This node is stopping; send the request again (to another node)." })
      expect(a.connection).toBe("close")
    } else {
      // The key has no authorization: every order is refused by the Market, every cancel unknown.
      expect([400]).toContain(a.status)
      expect(body.code === -2010 || body.code === -2011, a.body).toBe(true)
    }
  }
  expect(answers.some((a) => a.status === 503)).toBe(true)
}

const stopUnderLoad = async (baseUrl: string, key: Key, signal: () => void, exited: Promise<{ code: number | null; at: number }>) => {
  const load = orderLoad(baseUrl, key)
  await new Promise((r) => setTimeout(r, 3_000))
  const before = load.answers.length
  const signalledAt = Date.now()
  signal()
  load.probeAfterSignal()
  const exit = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), STOP_TIMEOUT_MS + 10_000))])
  await load.end()
  expect(before).toBeGreaterThan(0)
  return { exit, stopMs: exit === undefined ? Infinity : exit.at - signalledAt, answers: load.answers }
}

describe("a node stops under order load", () => {
  it("npm start (embedded Postgres): SIGTERM to the group drains and exits 0; no postmaster left", { timeout: 240_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sl-stopload-"))
    dirs.push(dataDir)
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SHARDLINE_"))) as Record<string, string>
    const port = await freePort()
    const vars = {
      SHARDLINE_DATA_DIR: dataDir,
      SHARDLINE_EMBEDDED_ENGINE: "postgres",
      SHARDLINE_HTTP_PORT: String(port),
      SHARDLINE_DESK_HTTP_PORT: String(await freePort()),
      SHARDLINE_SOCIAL_HTTP_PORT: String(await freePort()),
      SHARDLINE_RUNNER_PORT: String(await freePort()),
      SHARDLINE_STOP_TIMEOUT_MS: String(STOP_TIMEOUT_MS),
      ...budgets
    }
    const child = spawn(process.execPath, ["--import", "tsx", "cluster/main.ts"], { env: { ...base, ...vars }, stdio: ["ignore", "pipe", "pipe"], detached: true })
    let out = ""
    child.stdout!.on("data", (b: Buffer) => (out += b.toString()))
    child.stderr!.on("data", (b: Buffer) => (out += b.toString()))
    const exited = new Promise<{ code: number | null; at: number }>((r) => child.once("exit", (code) => r({ code, at: Date.now() })))
    try {
      const baseUrl = `http://127.0.0.1:${port}`
      const deadline = Date.now() + 90_000
      while (!(await fetch(`${baseUrl}/api/public/v1/ping`).then((r) => r.ok, () => false))) {
        if (Date.now() > deadline) throw new Error(`npm start did not answer within 90 s:\n${out}`)
        await new Promise((r) => setTimeout(r, 200))
      }
      const key = cliJson<Key>(await cli(["keys", "create", "--scopes", "read,trade", "--json"], { SHARDLINE_DATA_DIR: dataDir }))
      const { exit, stopMs, answers } = await stopUnderLoad(baseUrl, key, () => process.kill(-child.pid!, "SIGTERM"), exited)
      expect(exit, out.slice(-3000)).toBeDefined()
      expect(exit!.code, out.slice(-3000)).toBe(0)
      expect(stopMs).toBeLessThan(STOP_TIMEOUT_MS)
      expectWellFormed(answers)
      expect(postgresUnder(dataDir)).toEqual([])
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL")
    }
  })

  it("a cluster node (socket topology): SIGTERM under load drains and exits 0", { timeout: 240_000 }, async () => {
    const db = await createTestDatabase("stop_under_load")
    try {
      const node = await spawnNode({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_STOP_TIMEOUT_MS: String(STOP_TIMEOUT_MS), ...budgets }, { startTimeoutMs: 90_000 })
      try {
        const key = cliJson<Key>(await cli(["keys", "create", "--scopes", "read,trade", "--json"], { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "sl-stopcli-")) }))
        const { exit, stopMs, answers } = await stopUnderLoad(node.baseUrl, key, () => node.child.kill("SIGTERM"), node.exited)
        expect(exit, node.output().slice(-3000)).toBeDefined()
        expect(exit!.code, node.output().slice(-3000)).toBe(0)
        expect(stopMs).toBeLessThan(STOP_TIMEOUT_MS)
        expectWellFormed(answers)
      } finally {
        await node.dispose()
      }
    } finally {
      await db.drop()
    }
  })

  it("kill -9 of an embedded node: its postmaster follows it (watchdog)", { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sl-kill9-"))
    dirs.push(dataDir)
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SHARDLINE_"))) as Record<string, string>
    const port = await freePort()
    const child = spawn(process.execPath, ["--import", "tsx", "cluster/main.ts"], {
      env: {
        ...base,
        SHARDLINE_DATA_DIR: dataDir,
        SHARDLINE_EMBEDDED_ENGINE: "postgres",
        SHARDLINE_HTTP_PORT: String(port),
        SHARDLINE_DESK_HTTP_PORT: String(await freePort()),
        SHARDLINE_SOCIAL_HTTP_PORT: String(await freePort()),
        SHARDLINE_RUNNER_PORT: String(await freePort())
      },
      stdio: "ignore",
      detached: true
    })
    const deadline = Date.now() + 90_000
    while (!(await fetch(`http://127.0.0.1:${port}/api/public/v1/ping`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline) throw new Error("npm start did not answer within 90 s")
      await new Promise((r) => setTimeout(r, 200))
    }
    const servers = postgresUnder(dataDir)
    expect(servers.length).toBeGreaterThan(0)
    process.kill(child.pid!, "SIGKILL")
    const gone = Date.now() + 20_000
    while (servers.some((pid) => isAlive(pid)) && Date.now() < gone) await new Promise((r) => setTimeout(r, 200))
    expect(servers.filter((pid) => isAlive(pid))).toEqual([])
  })
})
