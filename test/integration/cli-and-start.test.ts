// `npm start` as a real process (configured only by SHARDLINE_* variables, deaf to plain
// HOST/PORT) and the keys CLI against it.
import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cli } from "../support/cli.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { freePort, testMasterKey } from "../support/node.ts"
import { signedGet } from "../../harness/signed.ts"

let db: TestDatabase
let child: ChildProcess
let baseUrl: string
let env: Record<string, string>

beforeAll(async () => {
  db = await createTestDatabase("cli")
  const port = await freePort()
  env = {
    SHARDLINE_DATABASE_URL: db.url,
    SHARDLINE_MASTER_KEY: testMasterKey,
    SHARDLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "sl-start-")),
    SHARDLINE_HTTP_PORT: String(port),
    SHARDLINE_DESK_HTTP_PORT: String(await freePort()),
    SHARDLINE_SOCIAL_HTTP_PORT: String(await freePort()),
    SHARDLINE_RUNNER_PORT: String(await freePort()),
    // Junk the platform layers would read if any setting were left to the environment.
    HOST: "junk.invalid",
    PORT: "junk",
    SHARDS_PER_GROUP: "junk"
  }
  child = spawn("npm", ["start"], { env: { ...process.env, ...env }, stdio: "ignore", detached: true })
  baseUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    const ok = await fetch(`${baseUrl}/api/public/v1/ping`).then((r) => r.status === 200, () => false)
    if (ok) break
    if (Date.now() > deadline) throw new Error("npm start did not answer within 60 s")
    await new Promise((r) => setTimeout(r, 200))
  }
}, 90_000)

afterAll(async () => {
  if (child?.pid) {
    const exited = new Promise((r) => child.once("exit", r))
    process.kill(-child.pid, "SIGTERM")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))])
  }
  await db?.drop()
})

describe("npm start", () => {
  it("binds where SHARDLINE_HTTP_PORT says, whatever HOST and PORT hold", async () => {
    const r = await fetch(`${baseUrl}/api/public/v1/time`)
    expect(r.status).toBe(200)
    const [runner] = await db.query<{ address: string }>("SELECT address FROM cluster_runners")
    expect(runner!.address).toBe(`127.0.0.1:${env.SHARDLINE_RUNNER_PORT}`)
  })
})

describe("keys CLI", () => {
  it("creates a key as one JSON object, stores the secret encrypted, lists and revokes it", async () => {
    const created = await cli(["keys", "create", "--scopes", "read,trade", "--ip", "127.0.0.1", "--json"], env)
    expect(created.code).toBe(0)
    const lines = created.stdout.trim().split("\n")
    expect(lines).toHaveLength(1)
    const key = JSON.parse(lines[0]!) as { apiKey: string; secretKey: string; userId: number }
    expect(key.apiKey).toMatch(/^[A-Za-z0-9]{64}$/)
    expect(key.secretKey).toMatch(/^[A-Za-z0-9]{64}$/)

    const [row] = await db.query<{ secret_enc: string; scopes: Array<string>; ip_allowlist: Array<string> }>(
      "SELECT secret_enc, scopes, ip_allowlist FROM api_keys WHERE api_key = $1", [key.apiKey])
    expect(row!.secret_enc).not.toContain(key.secretKey)
    expect(row!.scopes).toEqual(["read", "trade"])
    expect(row!.ip_allowlist).toEqual(["127.0.0.1"])

    const listed = await cli(["keys", "list", "--json"], env)
    expect(listed.code).toBe(0)
    expect(listed.stdout).not.toContain(key.secretKey)
    expect(JSON.parse(listed.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ apiKey: key.apiKey, revokedAt: null })]))

    expect((await signedGet(baseUrl, "/api/public/v1/account", key)).status).toBe(200)
    const revoked = await cli(["keys", "revoke", key.apiKey], env)
    expect(revoked.code).toBe(0)
    // A revoke that revokes nothing says so and exits non-zero: already revoked, or no such key.
    const again = await cli(["keys", "revoke", key.apiKey, "--json"], env)
    expect({ code: again.code, out: JSON.parse(again.stdout) }).toEqual({ code: 1, out: { apiKey: key.apiKey, revoked: false } })
    const unknown = await cli(["keys", "revoke", "nosuchkey"], env)
    expect({ code: unknown.code, stdout: unknown.stdout, stderr: unknown.stderr.trim() }).toEqual({ code: 1, stdout: "", stderr: "no active key nosuchkey" })
    // Nodes trust their key cache for at most 2 s.
    await new Promise((r) => setTimeout(r, 2100))
    const after = await signedGet(baseUrl, "/api/public/v1/account", key)
    expect(after.status).toBe(401)
    expect(((await after.json()) as { code: number }).code).toBe(-2015)
  })

  it("refuses unknown scopes and usage errors with exit code 2", async () => {
    const bad = await cli(["keys", "create", "--scopes", "read,withdraw", "--json"], env)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("withdraw")
    expect((await cli(["keys", "frobnicate"], env)).code).toBe(2)
    const segwit = await cli(["keys", "create", "--scopes", "read", "--address", "tok1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"], env)
    expect(segwit.code).toBe(2)
    expect(segwit.stderr).toMatch(/bech32.*legacy address starting with T/)
    expect((await cli(["nope"], env)).code).toBe(2)
  })
})
