// The Attestor's cadence survives kill -9. A node process attests every 3 s
// (SHARDLINE_ATTESTATION_INTERVAL_MS) with its durable Tick; it is killed -9 with a tick pending
// in cluster storage; a second node on the same database takes the entity over. Its start Kick
// sees the pending tick (not yet counted lost) and schedules nothing: the attestations that
// follow come from the persisted tick delivered to the new owner. The whole series still
// verifies: numbered without a gap, each chained to the one before.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { testMasterKey } from "../support/node.ts"

let db: TestDatabase
const nodes: Array<NodeProcess> = []

beforeAll(async () => {
  db = await createTestDatabase("attestkill")
}, 60_000)
afterAll(async () => {
  for (const n of nodes) await n.dispose()
  await db?.drop()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const count = async () => Number((await db.query("SELECT count(*)::int AS n FROM desk_attestations"))[0]!["n"])
const waitFor = async (what: string, timeoutMs: number, ok: () => Promise<boolean>) => {
  const deadline = Date.now() + timeoutMs
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(250)
  }
}

describe("attestor across kill -9", () => {
  it("keeps attesting on the node that takes over, from the persisted tick, without a gap in the series", { timeout: 240_000 }, async () => {
    const vars = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_ATTESTATION_INTERVAL_MS: "3000", SHARDLINE_DEVNET_BLOCK_MS: "0" }
    const a = await spawnNode(vars, { startTimeoutMs: 90_000 })
    nodes.push(a)
    await waitFor("three attestations on the first node", 60_000, async () => (await count()) >= 3)
    a.child.kill("SIGKILL")
    await a.exited
    const atKill = await count()
    const [pending] = await db.query<{ tick_n: string }>("SELECT tick_n::text AS tick_n FROM desk_attestor")
    const tickAtKill = Number(pending!.tick_n)

    const b = await spawnNode(vars, { startTimeoutMs: 90_000 })
    nodes.push(b)
    await waitFor("three more attestations after the takeover", 90_000, async () => (await count()) >= atKill + 3)
    // The ticks went on from the one pending at the kill (each attests, then schedules the next):
    // three attestations took ticks tickAtKill, +1, +2, whatever the Kick did.
    const [after] = await db.query<{ tick_n: string }>("SELECT tick_n::text AS tick_n FROM desk_attestor")
    expect(Number(after!.tick_n)).toBeGreaterThanOrEqual(tickAtKill + 2)
    // The pending tick was delivered to the new owner: its message is processed.
    const delivered = await db.query<{ processed: boolean }>(
      "SELECT processed FROM cluster_messages WHERE entity_type = 'Attestor' AND tag = 'Tick' AND message_id LIKE $1", [`%tick:${tickAtKill}:%`])
    expect(delivered).toEqual([{ processed: true }])
    const rows = await db.query<{ seq: string; payload_hash: string; prev_hash: string | null }>(
      "SELECT seq::text AS seq, payload_hash, prev_hash FROM desk_attestations ORDER BY seq")
    rows.forEach((r, i) => {
      expect(Number(r.seq)).toBe(i + 1)
      expect(r.prev_hash).toBe(i === 0 ? null : rows[i - 1]!.payload_hash)
    })
    // Attested in order of time, as chained.
    const times = (await db.query<{ ms: string }>("SELECT (extract(epoch FROM attested_at) * 1000)::bigint::text AS ms FROM desk_attestations ORDER BY seq")).map((r) => Number(r.ms))
    expect([...times].sort((x, y) => x - y)).toEqual(times)
  })
})
