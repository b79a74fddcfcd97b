// The desk's durable timers record when they were due and when they fired (desk_timer_firings,
// issue 25): a link token's Expire once, an open order's Tick chain on its 3 s grid, a redelivery
// counted on the same row, and firings older than a day pruned.
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { MintLinkToken } from "../../schemas/common/linkToken.ts"
import { DeskLinkToken } from "../../schemas/desk/identity.ts"
import { AdvanceOrder, DeskOrderEntity, WatchOrder } from "../../schemas/desk/orders.ts"
import { configLayer } from "../../src/config.ts"
import { EXPIRED_TICK_MS, ORDER_TICK_MS } from "../../src/desk/orders/DeskOrderEntity.ts"
import { OPEN_QUIET_MS, quietOrders, REARM_EVERY } from "../../src/desk/orders/tickRearm.ts"
import { firingsKeptMs, pruneFirings, recordFiring } from "../../src/desk/timerFirings.ts"
import { linkTokenId, newChallengeId, newLinkToken } from "../../src/platform/identity/linkTokens.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { pgClientLayer, withTableRenamed } from "../support/pg.ts"
import { createDeskKey } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  db = await createTestDatabase("desktimers")
  node = await startNode(db.url, { SHARDLINE_MESSAGE_POLL_MS: "200" })
}, 90_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)

interface FiringRow {
  readonly due_ms: number
  readonly fired_ms: number
  readonly last_ms: number
  readonly deliveries: number
}
const firingsOf = (timer: string, entityId: string) =>
  db.query<FiringRow>(`SELECT (extract(epoch FROM due_at) * 1000)::float8 AS due_ms, (extract(epoch FROM fired_at) * 1000)::float8 AS fired_ms,
      (extract(epoch FROM last_fired_at) * 1000)::float8 AS last_ms, deliveries
    FROM desk_timer_firings WHERE timer = $1 AND entity_id = $2 ORDER BY due_at`, [timer, entityId])

/** An open cash-out waiting for its deposit, written as its entity would, and its entity told to watch it (its Tick chain starts). */
const watchedOpenOrder = async (shortRef: string, depositAddress: string, status = "awaiting_deposit", expiresIn = "1 hour") => {
  const key = await createDeskKey(db.url, { scopes: ["cashout"] })
  const [order] = await db.query<{ id: string }>(`INSERT INTO desk_orders (short_ref, member_id, key_id, kind, status, asset, chain, amount, fee, payout,
      deposit_address, required_confirmations, expires_at)
    SELECT $2, member_id, id, 'cashout', $4, 'DUSD', 'base', 100000000, 300000, 99700, $3, 1, now() + $5::interval
    FROM desk_api_keys WHERE key_hash = encode(sha256($1::bytea), 'hex') RETURNING id::text`, [key.apiKey, shortRef, depositAddress, status, expiresIn])
  await node.run(Effect.flatMap(DeskOrderEntity.client, (c) => c(order!.id).Watch(new WatchOrder())))
  return order!
}

describe("desk timer firings", () => {
  it("a link token's Expire records its due time and when it fired, once", async () => {
    const token = newLinkToken()
    const tokenHash = linkTokenId(token)
    const now = Date.now()
    const [member] = await db.query<{ id: string }>("INSERT INTO desk_members DEFAULT VALUES RETURNING id")
    const dueAtMs = now + 1500
    await node.run(Effect.flatMap(DeskLinkToken.client, (c) => c(tokenHash).Mint(new MintLinkToken({
      subject: member!.id, challengeId: newChallengeId(), allowRebind: false, issuedAtMs: now, expiresAtMs: dueAtMs
    }))))
    await expect.poll(async () => (await firingsOf("link_expire", tokenHash)).length, { timeout: 15_000, interval: 200 }).toBe(1)
    const [f] = await firingsOf("link_expire", tokenHash)
    expect(f!.due_ms).toBe(dueAtMs)
    expect(f!.fired_ms).toBeGreaterThanOrEqual(dueAtMs)
    expect(f!.fired_ms - dueAtMs).toBeLessThan(10_000)
    expect(f!.deliveries).toBe(1)
    await expect.poll(async () => (await db.query<{ status: string }>("SELECT status FROM link_tokens WHERE token_hash = $1", [tokenHash]))[0]?.status,
      { timeout: 5_000, interval: 200 }).toBe("expired")
  })

  it("an order's Tick chain survives a database failure while a tick schedules the next", async () => {
    // Chaos seed 8 (session 16): a tick ran while Postgres restarted, its next tick was not
    // scheduled, the failure was only logged, and the order never ticked again. The tick now
    // tries again until the database answers. Here desk_orders is away for 4 s: every tick in
    // that window fails to read the order, and the chain must go on once it is back.
    const order = await watchedOpenOrder("TX-TIMERS02", "Tdeposit2")
    await expect.poll(async () => (await firingsOf("order_tick", order!.id)).length, { timeout: 30_000, interval: 300 }).toBeGreaterThanOrEqual(1)
    await withTableRenamed(db, "desk_orders", () => new Promise((r) => setTimeout(r, 2 * ORDER_TICK_MS - 2_000)))
    const back = Date.now()
    await expect.poll(async () => (await firingsOf("order_tick", order!.id)).filter((t) => t.fired_ms > back).length,
      { timeout: 30_000, interval: 500 }).toBeGreaterThanOrEqual(2)
  })

  it("an open order's Tick chain records each tick on its grid", async () => {
    const order = await watchedOpenOrder("TX-TIMERS01", "Tdeposit")
    await expect.poll(async () => (await firingsOf("order_tick", order!.id)).length, { timeout: 30_000, interval: 500 }).toBeGreaterThanOrEqual(3)
    const ticks = await firingsOf("order_tick", order!.id)
    for (const t of ticks) {
      expect(t.due_ms % ORDER_TICK_MS).toBe(0)
      expect(t.fired_ms).toBeGreaterThanOrEqual(t.due_ms)
      expect(t.deliveries).toBe(1)
    }
    // A chain: each tick schedules the next one on the grid after it fired.
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]!.due_ms).toBeGreaterThan(ticks[i - 1]!.fired_ms)
  })

  it("an expired order watching for a late deposit ticks on the slower EXPIRED_TICK_MS grid", { timeout: 90_000 }, async () => {
    // Every order a customer abandons watches for a day; at the open order's 3 s that was 28,800
    // stored timer messages each. One expired a minute ago must tick on the 30 s grid.
    const order = await watchedOpenOrder("TX-TIMERS03", "Tdeposit3", "expired", "-1 minute")
    await expect.poll(async () => (await firingsOf("order_tick", order.id)).length, { timeout: EXPIRED_TICK_MS + 15_000, interval: 500 }).toBeGreaterThanOrEqual(1)
    // At 3 s the chain would have ticked three more times by now.
    await new Promise((r) => setTimeout(r, 3 * ORDER_TICK_MS + 1_000))
    const ticks = await firingsOf("order_tick", order.id)
    expect(ticks).toHaveLength(1)
    expect(ticks[0]!.due_ms % EXPIRED_TICK_MS).toBe(0)
  })

  it("a Tick chain that was lost starts again: the re-arm sweep sends Advance, which schedules the next tick", { timeout: 120_000 }, async () => {
    // Chaos seed 7 (session 19): a cash-out's chain went quiet for 22 minutes. Here the chain is
    // cut by hand: every pending Tick of the order is deleted until none has fired for longer
    // than OPEN_QUIET_MS would allow; the sweep (tickRearm.ts) must start it again.
    const order = await watchedOpenOrder("TX-TIMERS04", "Tdeposit4")
    await expect.poll(async () => (await firingsOf("order_tick", order.id)).length, { timeout: 30_000, interval: 300 }).toBeGreaterThanOrEqual(1)
    const lastFired = async () => Math.max(...(await firingsOf("order_tick", order.id)).map((f) => f.fired_ms))
    while (Date.now() - (await lastFired()) < 2 * ORDER_TICK_MS + 1_000) {
      await db.query("DELETE FROM cluster_messages WHERE entity_id = $1 AND tag = 'Tick' AND processed = false", [order.id])
      await new Promise((r) => setTimeout(r, 100))
    }
    const cut = await lastFired()
    await expect.poll(async () => (await lastFired()) > cut, { timeout: OPEN_QUIET_MS + 60_000, interval: 500 }).toBe(true)
    // Then it goes on by itself.
    const resumed = await lastFired()
    await expect.poll(async () => (await lastFired()) > resumed, { timeout: 20_000, interval: 500 }).toBe(true)
  })

  it("a chain that ends on purpose says so, and the re-arm sweep restarts a settled order's chain that did not", { timeout: 120_000 }, async () => {
    // Chaos seed 7 (session 20): a released wrap following its ledger legs went 522 s without a
    // tick, and the sweep looked only at open and expired orders. Now it looks at every order whose
    // chain has not ended on purpose (desk_orders.ticks_done_at).
    const ticksDone = async (id: string) =>
      (await db.query<{ done: boolean }>("SELECT ticks_done_at IS NOT NULL AS done FROM desk_orders WHERE id = $1", [id]))[0]?.done
    // An expired order past its late-deposit watch, and a released one with no ledger legs: their
    // chains end at the first look, and say so.
    const watchOver = await watchedOpenOrder("TX-TIMERS05", "Tdeposit5", "expired", "-25 hours")
    const released = await watchedOpenOrder("TX-TIMERS06", "Tdeposit6", "released")
    await expect.poll(async () => [await ticksDone(watchOver.id), await ticksDone(released.id)], { timeout: 15_000, interval: 300 }).toEqual([true, true])
    expect(await firingsOf("order_tick", watchOver.id)).toEqual([])
    expect(await inNode(quietOrders)).not.toContain(released.id)

    // A released order whose chain was lost before it ended (no Watch, no tick, changed a minute ago).
    const lost = await watchedOpenOrder("TX-TIMERS07", "Tdeposit7", "released")
    await expect.poll(() => ticksDone(lost.id), { timeout: 15_000, interval: 300 }).toBe(true)
    await db.query("UPDATE desk_orders SET ticks_done_at = NULL, updated_at = now() - interval '1 minute' WHERE id = $1", [lost.id])
    await db.query("DELETE FROM desk_timer_firings WHERE entity_id = $1", [lost.id])
    expect(await inNode(quietOrders)).toContain(lost.id)
    // The node's own sweep sends it Advance; its look finds the legs final and ends the chain.
    await expect.poll(() => ticksDone(lost.id), { timeout: 2 * Duration.toMillis(REARM_EVERY) + 15_000, interval: 500 }).toBe(true)
  })

  it("a chain that ended on purpose stays ended: a poll's Advance while the legs cannot be read starts no tick", { timeout: 60_000 }, async () => {
    // Chaos seed 7, 30 minutes (sessions 22 and 24): released orders whose chains had ended were
    // started again by a poll during a ledger refusal ("its ledger legs not followed now"), the
    // failed read taken for "not final". Here the legs' table is away while the poll's Advance runs.
    const ticksDone = async (id: string) =>
      (await db.query<{ done: boolean }>("SELECT ticks_done_at IS NOT NULL AS done FROM desk_orders WHERE id = $1", [id]))[0]?.done
    const pendingTicks = async (id: string) =>
      (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM cluster_messages WHERE entity_id = $1 AND tag = 'Tick' AND NOT processed", [id]))[0]!.n
    const ended = await watchedOpenOrder("TX-TIMERS08", "Tdeposit8", "released")
    await expect.poll(() => ticksDone(ended.id), { timeout: 15_000, interval: 300 }).toBe(true)
    expect(await pendingTicks(ended.id), "no tick pending once the chain ended").toBe(0)
    await withTableRenamed(db, "desk_order_legs", async () => {
      await node.run(Effect.flatMap(DeskOrderEntity.client, (c) => c(ended.id).Advance(new AdvanceOrder())))
    })
    expect(await pendingTicks(ended.id), "no tick scheduled by the Advance").toBe(0)
    await new Promise((r) => setTimeout(r, ORDER_TICK_MS + 1_000))
    expect(await firingsOf("order_tick", ended.id)).toEqual([])
  })

  it("counts a redelivery on the timer's row, and prunes firings older than a day", async () => {
    const due = Date.now() - 1000
    await inNode(recordFiring("link_expire", "redelivered", due))
    await inNode(recordFiring("link_expire", "redelivered", due))
    const [row] = await firingsOf("link_expire", "redelivered")
    expect(row!.deliveries).toBe(2)
    expect(row!.last_ms).toBeGreaterThanOrEqual(row!.fired_ms)

    const old = new Date(Date.now() - firingsKeptMs - 60_000)
    await db.query(`INSERT INTO desk_timer_firings (timer, entity_id, due_at, fired_at, last_fired_at)
      SELECT 'order_tick', 'old', $1::timestamptz - make_interval(secs => g * 3), $1::timestamptz - make_interval(secs => g * 3), $1 FROM generate_series(0, 5999) g`, [old])
    const pruned = await inNode(pruneFirings())
    expect(pruned).toBe(6000)
    expect(await firingsOf("order_tick", "old")).toEqual([])
    expect(await firingsOf("link_expire", "redelivered")).toHaveLength(1)
    const [{ n }] = await inNode(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM desk_timer_firings WHERE timer = 'order_tick' AND entity_id <> 'old'`)) as [{ n: number }]
    expect(n).toBeGreaterThan(0)
  })
})
