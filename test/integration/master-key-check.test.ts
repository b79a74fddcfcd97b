// A node or CLI given a master key that does not open the secrets already in the database refuses
// to start with one line naming the table (it used to start and answer 503 to every existing
// key); a socket-topology node refuses to start with only a key file in its data dir.
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { cli } from "../support/cli.ts"
import { runNodeToExit } from "../../harness/nodeProcess.ts"
import { testMasterKey } from "../support/node.ts"

const otherKey = "22".repeat(32)
let db: TestDatabase

const start = runNodeToExit

beforeAll(async () => {
  db = await createTestDatabase("masterkey")
  await createKey(db.url, { scopes: ["read"] }) // seals an API secret and the check value with testMasterKey
}, 90_000)
afterAll(async () => {
  await db?.drop()
})

const refusalLine = (output: string) => output.split("\n").filter((l) => l.includes("Invalid data at SHARDLINE_MASTER_KEY"))

describe("master key", () => {
  it("a node started with another master key refuses, naming the check value's table", async () => {
    expect(await db.query("SELECT id FROM secret_box_check")).toEqual([{ id: 1 }])
    const res = await start({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: otherKey, SHARDLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "sl-mk-")) })
    expect(res.code).toBe(1)
    expect(refusalLine(res.output)).toHaveLength(1)
    expect(res.output).toContain(`Invalid data at SHARDLINE_MASTER_KEY: "SHARDLINE_MASTER_KEY does not open the key check in table secret_box_check`)
    expect(res.output).not.toContain(otherKey)
    expect(res.output).not.toMatch(/^\s+at /m)
  }, 90_000)

  it("without a check value (a database from before it), the newest API secret is tried; the CLI refuses too", async () => {
    await db.query("DELETE FROM secret_box_check")
    const wrong = await cli(["keys", "list"], { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: otherKey })
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain(`SHARDLINE_MASTER_KEY does not open the API secrets already in table api_keys (secret_enc)`)
    expect(await db.query("SELECT id FROM secret_box_check")).toEqual([]) // a refused key seals nothing
    const right = await cli(["keys", "list"], { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey })
    expect(right.stderr).toBe("")
    expect(right.code).toBe(0)
    expect(await db.query("SELECT id FROM secret_box_check")).toEqual([{ id: 1 }]) // the right key wrote it back
  }, 120_000)

  it("a socket-topology node refuses to start without SHARDLINE_MASTER_KEY", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sl-mk-"))
    const res = await start({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_TOPOLOGY: "socket", SHARDLINE_DEVNET_PER_NODE: "true", SHARDLINE_DATA_DIR: dataDir })
    expect(res.code).toBe(1)
    expect(refusalLine(res.output)).toHaveLength(1)
    expect(res.output).toContain(`Invalid data at SHARDLINE_MASTER_KEY: "must be set on a socket-topology (multi-node) node`)
    expect(res.output).not.toMatch(/^\s+at /m)
    expect(existsSync(join(dataDir, "master.key"))).toBe(false)
  }, 90_000)
})
