// A start that never ends exits 1 for the process manager (SHARDLINE_START_DEADLINE_MS). Chaos
// seed 10 had a node whose database was cut 6 s into its start: its runner and shard loop ran on,
// its listeners never served, and nothing exited. Here the start is held for good by a database
// that accepts connections and never answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { runNodeToExit } from "../../harness/nodeProcess.ts"
import { startTcpProxy, type TcpProxy } from "../../harness/tcpProxy.ts"
import { testMasterKey } from "../support/node.ts"

let db: TestDatabase
let proxy: TcpProxy
beforeAll(async () => {
  db = await createTestDatabase("startdl")
  proxy = await startTcpProxy({ host: "127.0.0.1", port: 5432 })
  await proxy.hang()
}, 60_000)
afterAll(async () => {
  await proxy?.up()
  await db?.drop()
})

describe("the start deadline", () => {
  it("a node whose start cannot finish exits 1 with one line naming the setting", async () => {
    const url = new URL(db.url)
    url.port = String(proxy.port)
    const started = Date.now()
    const run = await runNodeToExit({
      SHARDLINE_TOPOLOGY: "socket", SHARDLINE_DATABASE_URL: url.toString(), SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DEVNET_PER_NODE: "true",
      SHARDLINE_START_DEADLINE_MS: "4000"
    })
    expect(run.code, run.output).toBe(1)
    expect(run.output).toContain("shardline: not started 4000 ms after the process began (SHARDLINE_START_DEADLINE_MS); exiting")
    expect(Date.now() - started).toBeLessThan(30_000)
    // Held, not refused: the node was waiting on the database when the deadline came.
    expect(proxy.heldRequests().length).toBeGreaterThan(0)
  }, 60_000)
})
