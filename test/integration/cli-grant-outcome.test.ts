// The CLI reports a grant's real outcome. Before: an answer that did not come back in time was
// reported as a failure (exit 1, "the grant stays queued") even when the grant was committed, and a
// retry then replaced it and destroyed its key. Now: committed → done (exit 0), not committed yet →
// uncertain with the id to check (exit 3), and `authorizations show <grantId>` tells which.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { cli } from "../support/cli.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode | undefined
let env: Record<string, string>

beforeAll(async () => {
  db = await createTestDatabase("cligrant")
  env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
}, 60_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const grantArgs = (apiKey: string, asset: string) => ["authorizations", "grant", "--key", apiKey, "--asset", asset, "--cap", "1", "--expires-in", "1h", "--json"]

describe("authorizations grant tells the truth", () => {
  it("with no runner up: uncertain (exit 3) with the id to check, never 'failed'; it applies once a node runs", async () => {
    const key = await createKey(db.url, { scopes: ["read", "trade"] })
    const res = await cli(grantArgs(key.apiKey, "BTC"), { ...env, SHARDLINE_CLI_REPLY_TIMEOUT_MS: "1500", SHARDLINE_CLI_SETTLE_MS: "1000" })
    expect(res.code).toBe(3)
    const outcome = JSON.parse(res.stdout) as { grantId: string; status: string }
    expect(outcome.status).toBe("uncertain")
    expect(res.stderr).toContain(`authorizations show ${outcome.grantId}`)
    const before = await cli(["authorizations", "show", outcome.grantId, "--json"], env)
    expect(before.code).toBe(1) // nothing committed yet
    node = await startNode(db.url)
    const deadline = Date.now() + 30_000
    let shown = await cli(["authorizations", "show", outcome.grantId, "--json"], env)
    while (shown.code !== 0 && Date.now() < deadline) shown = await cli(["authorizations", "show", outcome.grantId, "--json"], env)
    expect(shown.code).toBe(0)
    expect(JSON.parse(shown.stdout)).toMatchObject({ grantId: outcome.grantId, asset: "BTC", status: "granted", cap: "1" })
  }, 120_000)

  it("an answer lost after the commit is reported as done (exit 0), with the committed grant", async () => {
    node ??= await startNode(db.url)
    const key = await createKey(db.url, { scopes: ["read", "trade"] })
    // The runner takes the message on its next poll (about 1 s): the CLI stops waiting first.
    const res = await cli(grantArgs(key.apiKey, "ETH"), { ...env, SHARDLINE_CLI_REPLY_TIMEOUT_MS: "100", SHARDLINE_CLI_SETTLE_MS: "20000" })
    expect(res.code).toBe(0)
    const done = JSON.parse(res.stdout) as { grantId: string; status: string; confirmedAfter: string; delegatedAddress: string }
    expect(done.status).toBe("granted")
    expect(done.confirmedAfter).toBe("no runner answered in time")
    expect(done.delegatedAddress).toMatch(/^T/)
  }, 120_000)

  it("show of an id never committed exits 1 and says so", async () => {
    const res = await cli(["authorizations", "show", "00000000-0000-0000-0000-000000000000"], env)
    expect(res.code).toBe(1)
    expect(res.stderr).toContain("no grant 00000000-0000-0000-0000-000000000000 has been committed")
  }, 60_000)
})
