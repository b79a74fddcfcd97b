// No test reads or writes the user's ./.data (issue 23, point 20). The suite's global setup sets
// SHARDLINE_FORBIDDEN_DATA_DIR to it, so a node or CLI started by a test refuses it at once with
// one line, and its teardown fails the run when anything under ./.data changed.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { runNodeToExit } from "../../harness/nodeProcess.ts"
import { cli, cliRefused } from "../support/cli.ts"
import { changedPaths, dataDirState, userDataDir } from "../support/globalSetup.ts"

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase("data_dir_guard")
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

describe("the user's ./.data is out of bounds for tests", () => {
  it("the suite names it in SHARDLINE_FORBIDDEN_DATA_DIR", () => {
    expect(process.env["SHARDLINE_FORBIDDEN_DATA_DIR"]).toBe(userDataDir)
  })

  it("a CLI run given ./.data refuses it in one line, whatever else it is given", async () => {
    const line = cliRefused(await cli(["keys", "list", "--json"], { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_DATA_DIR: "./.data" }))
    expect(line).toMatch(/SHARDLINE_DATA_DIR.*data dir of your own `npm start`, which tests must not touch/)
  })

  it("a node started on it refuses to start, exit 1", { timeout: 90_000 }, async () => {
    const { code, output } = await runNodeToExit({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_DATA_DIR: userDataDir })
    expect(code).toBe(1)
    expect(output).toMatch(/SHARDLINE_DATA_DIR.*tests must not touch/)
  })

  it("the teardown's check sees a file added or changed under a data dir", () => {
    const dir = mkdtempSync(join(tmpdir(), "sl-guard-"))
    const before = dataDirState(dir)
    writeFileSync(join(dir, "master.key"), "x")
    expect(changedPaths(before, dataDirState(dir))).toContain("master.key")
    expect(changedPaths(dataDirState(join(dir, "none")), dataDirState(dir)).length).toBeGreaterThan(0)
  })
})
