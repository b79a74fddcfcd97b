// The cluster's read lease, shortened (src/platform/entity/staleReads.ts): a persisted message the
// storage read loop marked read and then dropped (a shard being let go, an entity closing) is read
// again within STALE_READ_MS, not after the library's 10 minutes. Here a link token's durable
// Expire is marked read by hand just as it comes due, the mark the library leaves on a message it
// drops; without the short lease it would fire 10 minutes late, and the test times out.
import { Duration, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { MintLinkToken } from "../../schemas/common/linkToken.ts"
import { DeskLinkToken } from "../../schemas/desk/identity.ts"
import { linkTokenId, newChallengeId, newLinkToken } from "../../src/platform/identity/linkTokens.ts"
import { STALE_READ_EVERY, STALE_READ_MS } from "../../src/platform/entity/staleReads.ts"
import { startNode, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  db = await createTestDatabase("stalereads")
  node = await startNode(db.url, { SHARDLINE_MESSAGE_POLL_MS: "200" })
}, 90_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const firings = (tokenHash: string) =>
  db.query<{ fired_ms: number; due_ms: number; deliveries: number }>(`SELECT (extract(epoch FROM fired_at) * 1000)::float8 AS fired_ms,
      (extract(epoch FROM due_at) * 1000)::float8 AS due_ms, deliveries FROM desk_timer_firings WHERE timer = 'link_expire' AND entity_id = $1`, [tokenHash])

describe("the cluster's read lease", () => {
  it("a due timer marked read and dropped is delivered within the short lease, once", { timeout: 90_000 }, async () => {
    const token = newLinkToken()
    const tokenHash = linkTokenId(token)
    const [member] = await db.query<{ id: string }>("INSERT INTO desk_members DEFAULT VALUES RETURNING id")
    const dueAtMs = Date.now() + 3_000
    await node.run(Effect.flatMap(DeskLinkToken.client, (c) => c(tokenHash).Mint(new MintLinkToken({
      subject: member!.id, challengeId: newChallengeId(), allowRebind: false, issuedAtMs: Date.now(), expiresAtMs: dueAtMs
    }))))
    const expire = async () => (await db.query<{ id: string }>(
      "SELECT id::text FROM cluster_messages WHERE entity_id = $1 AND tag = 'Expire' AND processed = false", [tokenHash]))
    expect(await expire()).toHaveLength(1)
    // Keep it marked read (as the read loop leaves a message it dropped) until it is due: the
    // read loop never sees it unmarked, as when it dropped it.
    while (Date.now() < dueAtMs + 1_000) {
      await db.query("UPDATE cluster_messages SET last_read = now() WHERE entity_id = $1 AND tag = 'Expire' AND processed = false", [tokenHash])
      await new Promise((r) => setTimeout(r, 50))
    }
    const marked = Date.now()
    expect(await firings(tokenHash)).toEqual([])
    await expect.poll(async () => (await firings(tokenHash)).length,
      { timeout: STALE_READ_MS + 2 * Duration.toMillis(STALE_READ_EVERY) + 10_000, interval: 250 }).toBe(1)
    const [f] = await firings(tokenHash)
    expect(f!.deliveries).toBe(1)
    // It waited for the lease (it was not delivered by a path that ignores the mark) and not for 10 minutes.
    expect(f!.fired_ms - marked).toBeGreaterThan(STALE_READ_MS - 2_000)
    expect(f!.fired_ms - f!.due_ms).toBeLessThan(STALE_READ_MS + 2 * Duration.toMillis(STALE_READ_EVERY) + 10_000)
    await expect.poll(async () => (await db.query<{ status: string }>("SELECT status FROM link_tokens WHERE token_hash = $1", [tokenHash]))[0]?.status,
      { timeout: 5_000, interval: 200 }).toBe("expired")
  })
})
