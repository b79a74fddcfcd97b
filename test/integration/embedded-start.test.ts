// `npm start` with no database URL: the embedded Postgres under the data dir, on both engines.
// The CLI attaches to the running system by data dir, an authorization's durable timer runs on
// the embedded cluster storage, and the data survives a restart.
import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { cli } from "../support/cli.ts"
import { freePort } from "../../harness/ports.ts"
import { signedGet } from "../../harness/signed.ts"

const start = async (env: Record<string, string>): Promise<{ child: ChildProcess; baseUrl: string }> => {
  const { SHARDLINE_DATABASE_URL: _ignored, ...base } = process.env
  const child = spawn("npm", ["start"], { env: { ...base, ...env }, stdio: "ignore", detached: true })
  const baseUrl = `http://127.0.0.1:${env.SHARDLINE_HTTP_PORT}`
  const deadline = Date.now() + 90_000
  for (;;) {
    if (await fetch(`${baseUrl}/api/public/v1/ping`).then((r) => r.status === 200, () => false)) break
    if (Date.now() > deadline) throw new Error("npm start did not answer within 90 s")
    await new Promise((r) => setTimeout(r, 250))
  }
  return { child, baseUrl }
}

// The restart must not begin while the old process still holds the data dir and the ports (a
// second process would answer the first ping and then reset as the first one exits), so wait
// for the exit itself; a node that does not stop within 90 s fails here by name.
const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<boolean>((r) => child.once("exit", () => r(true)))
  process.kill(-child.pid!, "SIGTERM")
  if (!(await Promise.race([exited, new Promise<boolean>((r) => setTimeout(() => r(false), 90_000))]))) {
    process.kill(-child.pid!, "SIGKILL")
    throw new Error("npm start did not exit within 90 s of SIGTERM")
  }
}

describe.each(["postgres", "pglite"] as const)("embedded default (%s)", (engine) => {
  it("serves, lets the CLI attach by data dir, runs a durable timer, and keeps data across a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), `sl-emb-${engine}-`))
    const env = {
      SHARDLINE_DATA_DIR: dataDir,
      SHARDLINE_EMBEDDED_ENGINE: engine,
      SHARDLINE_HTTP_PORT: String(await freePort()),
      SHARDLINE_DESK_HTTP_PORT: String(await freePort()),
      SHARDLINE_SOCIAL_HTTP_PORT: String(await freePort()),
      SHARDLINE_RUNNER_PORT: String(await freePort())
    }
    const cliEnv = { SHARDLINE_DATA_DIR: dataDir, SHARDLINE_DATABASE_URL: "" }
    let run = await start(env)
    try {
      const created = await cli(["keys", "create", "--scopes", "read,trade", "--json"], cliEnv)
      expect(created.stderr).toBe("")
      const key = JSON.parse(created.stdout) as { apiKey: string; secretKey: string }
      const granted = await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "LTC", "--cap", "5", "--expires-in", "3s", "--json"], cliEnv)
      expect(granted.code).toBe(0)
      const { expiresAt } = JSON.parse(granted.stdout) as { expiresAt: number }
      const account = async () => (await (await signedGet(run.baseUrl, "/api/public/v1/account", key)).json()) as { authorizations: Array<unknown> }
      expect((await account()).authorizations).toHaveLength(1)
      await new Promise((r) => setTimeout(r, Math.max(0, expiresAt + 2500 - Date.now())))
      expect((await account()).authorizations).toHaveLength(0)
      const ops = await cli(["ops", "--json"], cliEnv)
      const view = JSON.parse(ops.stdout) as { shardOwners: Array<{ shards: number }>; pendingTimers: { count: number } }
      expect(view.shardOwners.map((o) => o.shards)).toEqual([300])

      await stop(run.child)
      run = await start(env)
      // The key made before the restart still signs; the expired grant stays gone.
      const after = await signedGet(run.baseUrl, "/api/public/v1/account", key)
      expect(after.status).toBe(200)
      expect(((await after.json()) as { authorizations: Array<unknown> }).authorizations).toHaveLength(0)
    } finally {
      await stop(run.child)
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 240_000)
})
