// Issue 22: two nodes on one database, the first one's shard-lock refresh stalled past the lock
// storage's deadline (8 s since session 23: patientLocks.ts) and then let through, as a second node's start in the same event loop once did. The node
// must mark its lock storage unhealthy (it drops every shard), come back, take its shards again,
// and then a volatile message from it to an entity on its peer's shards, and to one on its own,
// must be answered; the same from the peer. The stall is a row lock held on the node's
// `cluster_runners` row: its heartbeat UPDATE, the first statement of every refresh, waits on it.
// Both nodes are a socket-topology cluster, as nodes that share a database must be: with two
// `single` nodes (the harness default) the first cross-node message is never answered, stall or
// not, which is what hung ops-redaction.test.ts (docs/operations.md, "Two nodes on one database").
import { Effect } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { DeskOrderEntity, PartnerEvent } from "../../schemas/desk/orders.ts"
import { eventually } from "../support/chainsOps.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { idOnShardOf, shardsHeld, shardsSettled } from "../support/shards.ts"

let db: TestDatabase
let first: RunningNode
let second: RunningNode
const cluster = { SHARDLINE_TOPOLOGY: "socket", SHARDLINE_DEVNET_PER_NODE: "true" }
const candidates = Array.from({ length: 64 }, (_, i) => `lock-stall-probe-${i}`)

beforeAll(async () => {
  db = await createTestDatabase("lockstall")
  first = await startNode(db.url, cluster)
  second = await startNode(db.url, cluster)
}, 180_000)
afterAll(async () => {
  await first?.stop()
  await second?.stop()
  await db?.drop()
})

const settled = () => shardsSettled([first, second])

let sent = 0
/** A PartnerEvent (volatile, as a webhook's) from `from` to entity `id`, answered within 10 s. */
const partnerEvent = (from: RunningNode, id: string) =>
  from.run(Effect.gen(function*() {
    const orders = yield* DeskOrderEntity.client
    const body = JSON.stringify({ event: "lock_stall_probe", n: ++sent })
    return yield* orders(id).PartnerEvent(new PartnerEvent({ partner: "partner-a", event: "lock_stall_probe", body, dedupeKey: `lock-stall-${sent}` }))
  }).pipe(Effect.timeout("10 seconds")))

describe("a node whose shard-lock refresh stalled, then recovered", () => {
  it("takes its shards back and its messages to its peer and to its own shards are answered", async () => {
    await eventually(settled, 60_000)
    const stall = new pg.Client({ connectionString: db.url })
    await stall.connect()
    try {
      await stall.query("BEGIN")
      await stall.query("SELECT 1 FROM cluster_runners WHERE address = $1 FOR UPDATE", [`${first.config.runnerHost}:${first.config.runnerPort}`])
      // The refresh timed out: the node let go of every shard ("Shard lock storage is unhealthy").
      await eventually(async () => ((await shardsHeld(first)) === 0 ? true : undefined), 25_000)
    } finally {
      await stall.query("COMMIT")
      await stall.end()
    }
    // "Shard lock storage has recovered": both hold shards again, all of them between the two.
    await eventually(settled, 30_000)
    const onFirst = await idOnShardOf(first, candidates)
    const onSecond = await idOnShardOf(second, candidates)
    expect(onFirst).toBeDefined()
    expect(onSecond).toBeDefined()
    for (const [from, to] of [[first, onSecond!], [first, onFirst!], [second, onFirst!], [second, onSecond!]] as const) {
      const recorded = await partnerEvent(from, to)
      expect(recorded.eventId).not.toBeNull()
    }
  }, 150_000)
})
