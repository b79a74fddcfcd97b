// Issue 8, item 1, external Postgres: with SHARDLINE_DATABASE_URL set nothing is restarted, but a
// node whose connections are all cut (the server restarted, a failover, an admin's
// pg_terminate_backend) must drain and reconnect. Here a node runs as its own process against a
// database on the machine's Postgres; for a few seconds the database refuses connections and every
// backend connection of it is terminated, again and again. It shows: /ping and /time answer 200
// throughout and /ops says the database is down; database routes answer again after; the API key
// and the grants acknowledged before are still there; a grant due in the middle of the outage
// expires afterwards, once (lateness printed, generous bound); the node holds all its shards again
// and is still running (no exit, no zombie). Once as `npm start` (single), once as a cluster node.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { signedGet } from "../../harness/signed.ts"
import { cli } from "../support/cli.ts"
import { probeDuringOutage } from "../support/outageProbe.ts"
import { testMasterKey } from "../support/node.ts"
import { variantsOfTier } from "../support/tier.ts"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** How long the database stays away (SHARDLINE_TEST_OUTAGE_MS to try others). */
const outageMs = Number(process.env.SHARDLINE_TEST_OUTAGE_MS ?? 6_000)

/** Terminates every backend of a database (from a connection to another database). */
const terminateAll = async (admin: pg.Client, name: string) =>
  (await admin.query<{ n: number }>(
    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
    [name]
  )).rows[0]!.n

// `single` is `npm start` with SHARDLINE_DATABASE_URL; `socket` is one node of a cluster.
describe.each(variantsOfTier({ core: ["single"], long: ["socket"] } as const))("a %s node on an external Postgres whose connections are all terminated", (topology) => {
  let db: TestDatabase
  let node: NodeProcess | undefined
  beforeAll(async () => {
    db = await createTestDatabase("extpg")
  }, 60_000)
  afterAll(async () => {
    const logDir = process.env.SHARDLINE_TEST_LOG_DIR
    if (logDir !== undefined && node !== undefined) writeFileSync(join(logDir, `external-pg-${topology}.log`), node.output())
    await node?.dispose()
    await db?.drop()
  })

  it("keeps /ping and /time up, reconnects, keeps every acknowledged write and fires the timer due in the outage", async () => {
    const n = await spawnNode({
      SHARDLINE_TOPOLOGY: topology,
      SHARDLINE_DATABASE_URL: db.url,
      SHARDLINE_MASTER_KEY: testMasterKey,
      // This test polls /ping, /time, /ops and /metrics from one IP; it is not about rate limits.
      SHARDLINE_RATE_LIMIT_IP_WEIGHT: "1000000"
    }, { startTimeoutMs: 90_000 }) // as the embedded tests allow: a start on a loaded 2-core machine can take a minute
    node = n
    const api = `${n.baseUrl}/api/public/v1`
    const shards = async () => {
      const text = await fetch(`${n.baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.text(), () => "")
      const m = /^shardline_shards_owned (\d+)$/m.exec(text)
      return m === null ? undefined : Number(m[1])
    }
    for (const deadline = Date.now() + 60_000; (await shards()) !== 300;) {
      if (Date.now() > deadline) throw new Error(`node did not hold 300 shards within 60 s:\n${n.output()}`)
      await sleep(300)
    }

    const cliEnv = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
    const keyRun = await cli(["keys", "create", "--scopes", "read", "--json"], cliEnv)
    expect(keyRun.stderr).toBe("")
    const key = JSON.parse(keyRun.stdout) as { apiKey: string; secretKey: string }
    const grant = async (asset: string, expiresIn: string) => {
      const r = await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", asset, "--cap", "1", "--expires-in", expiresIn, "--json"], cliEnv)
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
      return JSON.parse(r.stdout) as { grantId: string; expiresAt: number }
    }
    type AccountBody = { authorizations?: Array<{ asset: string }> }
    const account = () => signedGet(api, "/account", key).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as AccountBody
    }), () => ({ status: 0, body: {} as AccountBody }))
    // Acknowledged before the outage: the key, two grants that outlive the test, one due in the outage.
    const kept = await Promise.all([grant("AAA", "1h"), grant("BBB", "1h")])
    const due = await grant("DUE", "8s")
    expect((await account()).status).toBe(200)

    // /ping and /time polled throughout; /ops read throughout.
    const probe = probeDuringOutage(n.baseUrl)

    // The outage: from 3 s before the grant is due, the database refuses new connections
    // (ALLOW_CONNECTIONS false: superusers too) and every connection it has is terminated, again
    // every 100 ms, for outageMs; then it takes connections again.
    const admin = new pg.Client({ connectionString: adminUrl })
    admin.on("error", () => {})
    await admin.connect()
    let terminated = 0
    let outageEndedAt: number
    const outageStartedAt = Math.max(Date.now(), due.expiresAt - 3_000)
    try {
      await sleep(outageStartedAt - Date.now())
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`)
      try {
        while (Date.now() < outageStartedAt + outageMs) {
          terminated += await terminateAll(admin, db.name)
          await sleep(100)
        }
      } finally {
        await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`)
      }
      outageEndedAt = Date.now()
    } finally {
      await admin.end()
    }
    expect(terminated, "connections were terminated").toBeGreaterThan(0)
    expect(due.expiresAt).toBeGreaterThan(outageStartedAt)
    expect(due.expiresAt).toBeLessThan(outageEndedAt)

    // Database routes answer again, and the key made before still authenticates.
    let recoveredAt: number | undefined
    let last = { status: 0, body: {} as AccountBody }
    for (const deadline = Date.now() + 30_000; recoveredAt === undefined && Date.now() < deadline;) {
      last = await account()
      if (last.status === 200) recoveredAt = Date.now()
      else await sleep(200)
    }
    if (recoveredAt === undefined) console.log(n.output().slice(-6000))
    expect(recoveredAt, `GET /account answered 200 within 30 s after the outage (last: ${last.status})`).toBeDefined()
    expect((last.body.authorizations ?? []).map((a) => a.asset).sort()).toEqual(["AAA", "BBB"])
    let opsStatus = 0
    for (const deadline = Date.now() + 15_000; opsStatus !== 200 && Date.now() < deadline; await sleep(300)) {
      opsStatus = await fetch(`${n.baseUrl}/ops`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status, () => 0)
    }
    expect(opsStatus, "/ops answers 200 again").toBe(200)

    // The timer due in the outage fires after it, once.
    let lateness: number | undefined
    for (const deadline = Date.now() + 30_000; lateness === undefined && Date.now() < deadline; await sleep(300)) {
      const rows = await db.query<{ ms: number }>(
        "SELECT (extract(epoch FROM (at - due_at)) * 1000)::float8 AS ms FROM authorization_events WHERE kind = 'expired' AND grant_id = $1",
        [due.grantId]
      ).catch(() => [])
      lateness = rows[0]?.ms
    }
    if (lateness === undefined) console.log(n.output().slice(-6000))
    expect(lateness, "the grant due during the outage expired").toBeDefined()
    console.log(`${topology}: EXTERNAL_PG_OUTAGE_MS=${outageEndedAt - outageStartedAt} TERMINATED=${terminated} RECOVERY_MS=${recoveredAt! - outageEndedAt} TIMER_LATENESS_AFTER_EXTERNAL_PG_OUTAGE_MS=${Math.round(lateness!)}`)
    // Generous: the rest of the outage, plus 15 s for reconnecting and polling on a loaded machine.
    expect(lateness!).toBeLessThan(outageEndedAt - due.expiresAt + 15_000)
    expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM authorization_events WHERE kind = 'expired' AND grant_id = $1", [due.grantId]))[0]!.n).toBe(1)

    // Every write acknowledged before is still there.
    const rows = await db.query<{ grant_id: string }>("SELECT grant_id FROM authorizations ORDER BY grant_id")
    expect(rows.map((r) => r.grant_id)).toEqual(kept.map((g) => g.grantId).sort())
    // A grant after the outage works end to end, and the node's account read model sees it at once:
    // its LISTEN connection was terminated too and must have been made again (without it the
    // cached account stays stale until its 60 s re-validation).
    await grant("CCC", "1h")
    let assets: Array<string> = []
    for (const deadline = Date.now() + 10_000; !assets.includes("CCC") && Date.now() < deadline; await sleep(200)) {
      assets = ((await account()).body.authorizations ?? []).map((a) => a.asset).sort()
    }
    expect(assets, "GET /account shows the grant made after the outage within 10 s").toEqual(["AAA", "BBB", "CCC"])

    // The node holds all its shards again and is still up.
    let owned: number | undefined
    for (const deadline = Date.now() + 20_000; owned !== 300 && Date.now() < deadline; await sleep(500)) owned = await shards()
    expect(owned).toBe(300)
    const seen = await probe.stop()
    expect([...seen.ping]).toEqual([200])
    expect([...seen.time]).toEqual([200])
    expect(seen.opsDown, "/ops said the database was down during the outage").toBeGreaterThan(0)
    expect(n.isRunning(), `the node is still running:\n${n.output().slice(-3000)}`).toBe(true)
  }, 240_000)
})
