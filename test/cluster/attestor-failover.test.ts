// The Attestor's cadence survives kill -9. A node process attests every 3 s
// (SHARDLINE_ATTESTATION_INTERVAL_MS) with its durable Tick; it is killed -9 with a tick pending
// in cluster storage; a second node on the same database takes the entity over. Its start Kick
// sees the pending tick (not yet counted lost) and schedules nothing: the attestations that
// follow come from the persisted tick delivered to the new owner. The whole series still
// verifies: numbered without a gap, each chained to the one before.
//
// An on-demand Attest redelivered after kill -9 (issue 23.13): the node is killed after the
// attestation row committed and before the entity answered (the test holds the row lock of the
// attestor's heartbeat, which the handler writes after the row, so the kill lands in between);
// the persisted Attest goes to the node that takes over, which answers the row its request
// already wrote instead of appending a second one.
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Attest, Attestor, attestorId } from "../../schemas/desk/attestor.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { clusterClientLayer } from "../support/clusterClient.ts"
import { testMasterKey } from "../support/node.ts"

let db: TestDatabase
let onDemandDb: TestDatabase
const nodes: Array<NodeProcess> = []

beforeAll(async () => {
  db = await createTestDatabase("attestkill")
  onDemandDb = await createTestDatabase("attestredeliver")
}, 60_000)
afterAll(async () => {
  for (const n of nodes) await n.dispose()
  await db?.drop()
  await onDemandDb?.drop()
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
    // Its nodes go now: the next test's nodes start on a machine without them.
    for (const n of nodes.splice(0)) await n.dispose()
  })
})

describe("an on-demand attestation across kill -9", () => {
  it("a persisted Attest redelivered to the node that takes over answers the row it wrote: one row per request", { timeout: 240_000 }, async () => {
    const rows = async () => Number((await onDemandDb.query("SELECT count(*)::int AS n FROM desk_attestations"))[0]!["n"])
    // Hourly cadence: after the start's first attestation no tick runs during the test.
    const vars = { SHARDLINE_DATABASE_URL: onDemandDb.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DEVNET_BLOCK_MS: "0" }
    const a = await spawnNode(vars, { startTimeoutMs: 90_000 })
    nodes.push(a)
    await waitFor("the start's attestation and its heartbeat", 60_000, async () =>
      (await rows()) >= 1 && (await onDemandDb.query("SELECT 1 FROM desk_heartbeats WHERE job = 'attestor'")).length === 1)
    const before = await rows()

    // The attestor's heartbeat row is held: the Attest handler commits its row, then blocks on the heartbeat.
    const lock = new pg.Client({ connectionString: onDemandDb.url })
    await lock.connect()
    await lock.query("BEGIN")
    await lock.query("SELECT 1 FROM desk_heartbeats WHERE job = 'attestor' FOR UPDATE")
    const requestId = randomUUID()
    await Effect.runPromise(Effect.scoped(Effect.provide(
      Effect.flatMap(Attestor.client, (c) => c(attestorId).Attest(new Attest({ requestId }), { discard: true })),
      clusterClientLayer(onDemandDb.url, "shardline:attest-redeliver-test")
    )))
    await waitFor("the on-demand attestation row", 60_000, async () => (await rows()) === before + 1)
    const [written] = await onDemandDb.query<{ seq: string }>("SELECT seq::text AS seq FROM desk_attestations ORDER BY seq DESC LIMIT 1")
    a.child.kill("SIGKILL")
    await a.exited
    await lock.query("ROLLBACK")
    await lock.end()
    // Killed before its answer: the message is still unprocessed in cluster storage.
    const message = async () => onDemandDb.query<{ processed: boolean }>(
      "SELECT processed FROM cluster_messages WHERE entity_type = 'Attestor' AND tag = 'Attest' AND message_id LIKE $1", [`%${requestId}%`])
    expect(await message()).toEqual([{ processed: false }])

    const b = await spawnNode(vars, { startTimeoutMs: 90_000 })
    nodes.push(b)
    await waitFor("the redelivered Attest to be answered", 90_000, async () => (await message())[0]?.processed === true)
    // The answer is the row the request wrote before the kill, and no row was appended for it again.
    expect(await rows()).toBe(before + 1)
    const reply = await onDemandDb.query<{ payload: string }>(
      "SELECT r.payload FROM cluster_replies r JOIN cluster_messages m ON m.request_id = r.request_id WHERE m.tag = 'Attest' AND m.message_id LIKE $1", [`%${requestId}%`])
    expect(reply.map((r) => r.payload).join("")).toContain(`"seq":${Number(written!.seq)}`)
    for (const n of nodes.splice(0)) await n.dispose()
  })
})
