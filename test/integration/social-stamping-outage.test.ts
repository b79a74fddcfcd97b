// Charged but not stamped, fixed: a node whose ledger (litecoind -regtest) becomes unreachable
// (the node reaches it through a TCP forwarder that is switched off: real refused connections)
// still takes a publish: the post is written and charged once, answered 202 with stamping
// "pending", shown by the lookup as pending; its Post entity retries on its own durable timer, and
// when the ledger is back every required stamp appears on the chain without the client doing
// anything. A retry with the same Idempotency-Key answers the same post and is never charged again.
import { Transaction, payments } from "bitcoinjs-lib"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { rawCid } from "../../src/crypto/cid.ts"
import type { NewAccount } from "../../src/social/accounts/Accounts.ts"
import { decodeStamp } from "../../src/social/posts/opReturn.ts"
import { waitFor } from "../support/waitFor.ts"
import type { Litecoind } from "../support/litecoind.ts"
import type { RunningNode } from "../support/node.ts"
import { type OutageWorld, startOutageWorld } from "../support/socialOutage.ts"
import type { TcpProxy } from "../support/tcpProxy.ts"

const PRICE = 25_000n
let world: OutageWorld
let litecoind: Litecoind
let proxy: TcpProxy
let db: TestDatabase
let node: RunningNode
let alice: NewAccount
let aliceSession: string
let bob: NewAccount
let bobSession: string
let ledger: OutageWorld["ledger"]
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

beforeAll(async () => {
  world = await startOutageWorld("socialoutage", PRICE, { SHARDLINE_SOCIAL_STAMP_SWEEP_MS: "1000" })
  ;({ litecoind, proxy, db, node, alice, aliceSession, bob, bobSession, ledger } = world)
}, 120_000)
afterAll(async () => {
  await world?.stop()
})

const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any })
const send = (path: string, body: Record<string, unknown>, token: string, key?: string) =>
  fetch(`${node.socialUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
    body: JSON.stringify(body)
  }).then(json)
const publish = (body: Record<string, unknown>, token: string, key?: string) => send("/api/social/posts", body, token, key)
const lookup = (id: string) => fetch(`${node.socialUrl}/api/public/post/${id}`).then(json)
const balance = async (address: string) =>
  BigInt((await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [address]))[0]!.b)
const chargesFor = async (postId: string) => (await db.query("SELECT 1 FROM social_charges WHERE post_id = $1", [postId])).length

/** The stamp as litecoind has it: its OP_RETURN decoded from the raw transaction. */
const onChain = async (txid: string) => {
  const hex = await litecoind.rpc<string>("getrawtransaction", txid)
  const data = payments.embed({ output: Transaction.fromHex(hex).outs[0]!.script }).data![0]!
  return Either.getOrThrow(decodeStamp(Buffer.from(data)))
}

/**
 * The post's FinishStamps timer is lost (as when an attempt gave up on the database): its
 * unprocessed messages are removed until none is left for longer than the longest retry wait.
 */
const loseFinishStampsTimers = async (postId: string) => {
  const timers = async () => (await db.query(
    "DELETE FROM cluster_messages WHERE entity_type = 'Post' AND entity_id = $1 AND tag = 'FinishStamps' AND NOT processed RETURNING 1", [postId])).length
  let quietSince = Date.now()
  await waitFor("no FinishStamps timer left", 30_000, async () => {
    if ((await timers()) > 0) quietSince = Date.now()
    return Date.now() - quietSince > 2_500 ? true : undefined
  }, 100)
}

describe("publishing while the ledger is unreachable", () => {
  it("publishes with the ledger up: 201, stamping done", async () => {
    const r = await publish({ body: "before the outage" }, aliceSession)
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ stamping: "done", txHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect((await onChain(r.body.txHash)).tag).toBe("CHV1P")
  })

  it("charges once, answers 202 pending, shows the post as pending, and finishes its stamps on its own when the ledger is back", async () => {
    const before = await balance(alice.address)
    await proxy.down()
    const key = "\"8e03978e-40d5-43e8-bc93-6894a57f9324\""
    const body = { body: "written during the outage", tags: ["outage"] }
    const first = await publish(body, aliceSession, key)
    expect(first.status, JSON.stringify(first.body)).toBe(202)
    expect(first.body).toMatchObject({ stamping: "pending", txHash: null, opReturn: null, postId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    const postId = first.body.postId as string
    expect(before - (await balance(alice.address))).toBe(PRICE)
    expect(await chargesFor(postId)).toBe(1)

    // The lookup shows it, without a proof yet.
    const pending = await lookup(postId)
    expect(pending.status).toBe(200)
    expect(pending.body.post).toMatchObject({ id: postId, body: "written during the outage" })
    expect(pending.body.proof).toMatchObject({ stamping: "pending", txHash: null, opReturn: null, metadataCid: first.body.metadataCid })

    // The client retries with the same key: the same post, not charged again.
    const retry = await publish(body, aliceSession, key)
    expect(retry.status).toBe(202)
    expect(retry.body.postId).toBe(postId)
    // The same key with another payload is refused (the draft's 422).
    const misuse = await publish({ body: "something else" }, aliceSession, key)
    expect(misuse).toMatchObject({ status: 422, body: { error: { code: "idempotency_key_reused" } } })
    // The entity keeps trying on its timer while the ledger is down.
    await waitFor("two failed retries", 20_000, async () =>
      ((await db.query<{ attempts: number }>("SELECT attempts FROM social_stamping_pending WHERE post_id = $1", [postId]))[0]?.attempts ?? 0) >= 2 ? true : undefined)
    expect(before - (await balance(alice.address))).toBe(PRICE)

    // Ledger back: the stamps appear with no client action.
    await proxy.up()
    const done = await waitFor("the stamps on the ledger", 30_000, async () => {
      const r = await lookup(postId)
      return r.body.proof?.stamping === "done" ? r : undefined
    }, 200)
    expect(done.body.proof.txHash).toMatch(/^[0-9a-f]{64}$/)
    const stamps = await db.query<{ tag: string; cid: string; txid: string }>("SELECT tag, cid, txid FROM social_stamps WHERE post_id = $1 ORDER BY seq", [postId])
    // A post without media claims its body (C), then its manifest (CHV1P) and its period (P).
    expect(stamps.map((s) => [s.tag, s.cid])).toEqual([["C", rawCid(Buffer.from(body.body))], ["CHV1P", first.body.metadataCid], ["P", first.body.metadataCid]])
    for (const s of stamps) {
      const decoded = await onChain(s.txid)
      expect(decoded).toMatchObject({ tag: s.tag, cid: s.cid, assetId: alice.assetId })
    }
    expect(done.body.proof.txHash).toBe(stamps[1]!.txid)
    expect((await db.query("SELECT 1 FROM social_stamping_pending WHERE post_id = $1", [postId])).length).toBe(0)

    // A retry now answers the finished post, still charged once.
    const after = await publish(body, aliceSession, key)
    expect(after.status).toBe(201)
    expect(after.body).toMatchObject({ postId, stamping: "done", txHash: stamps[1]!.txid })
    expect(await chargesFor(postId)).toBe(1)
    expect(before - (await balance(alice.address))).toBe(PRICE)
    await run(ledger().mine(1, randomLedgerKey().address))
    expect((await litecoind.rpc<{ confirmations: number }>("getrawtransaction", stamps[1]!.txid, true)).confirmations).toBe(1)
  }, 90_000)

  it("a pending post whose retry timer was lost is re-armed by the sweep and finished when the ledger is back", async () => {
    await proxy.down()
    const first = await publish({ body: "its timer will be lost" }, aliceSession)
    expect(first.status).toBe(202)
    const postId = first.body.postId as string
    await waitFor("a failed retry", 20_000, async () =>
      ((await db.query<{ attempts: number }>("SELECT attempts FROM social_stamping_pending WHERE post_id = $1", [postId]))[0]?.attempts ?? 0) >= 1 ? true : undefined)
    await loseFinishStampsTimers(postId)
    // Pending for longer than the sweep's grace; the ledger is back.
    await db.query("UPDATE social_stamping_pending SET since = now() - interval '2 minutes' WHERE post_id = $1", [postId])
    await proxy.up()
    const done = await waitFor("the stamps on the ledger, by the sweep", 40_000, async () => {
      const r = await lookup(postId)
      return r.body.proof?.stamping === "done" ? r : undefined
    }, 300)
    const stamps = await db.query<{ tag: string; txid: string }>("SELECT tag, txid FROM social_stamps WHERE post_id = $1 ORDER BY seq", [postId])
    expect(stamps.map((s) => s.tag)).toEqual(["C", "CHV1P", "P"])
    expect(done.body.proof.txHash).toBe(stamps[1]!.txid)
    for (const s of stamps) expect(await onChain(s.txid)).toMatchObject({ tag: s.tag, cid: s.tag === "C" ? rawCid(Buffer.from("its timer will be lost")) : first.body.metadataCid })
    expect(await chargesFor(postId)).toBe(1)
  }, 120_000)

  it("a recorded stamp the ledger never got, with its owed row paid and no timer left, is sent again by the sweep", async () => {
    // The state a node killed between a stamp's record and its broadcast leaves when the redelivered
    // Change finds its owed row paid (chaos seed 2: an XM "unknown to the chain" at the end): the
    // row is written, the ledger does not know it, nothing is pending and no FinishStamps is left.
    const post = await publish({ body: "its renewal stamp will not go out" }, aliceSession)
    expect(post.status).toBe(201)
    const postId = post.body.postId as string
    await proxy.down()
    const renewal = await send(`/api/social/posts/${postId}/renew`, {}, aliceSession, "renewal-unsent")
    expect(renewal.status, JSON.stringify(renewal.body)).toBe(200)
    const recorded = await waitFor("the renewal's R recorded", 20_000, async () =>
      (await db.query<{ txid: string }>("SELECT txid FROM social_stamps WHERE post_id = $1 AND tag = 'R'", [postId]))[0])
    await loseFinishStampsTimers(postId)
    await db.query("DELETE FROM social_stamping_pending WHERE post_id = $1", [postId])
    expect((await db.query<{ txid: string | null }>("SELECT txid FROM social_owed_stamps WHERE post_id = $1 AND tag = 'R'", [postId]))[0]?.txid).toBe(recorded.txid)
    // Older than the minute a broadcast is given; the ledger is back and has never seen it.
    await db.query("UPDATE social_stamps SET created_at = now() - interval '2 minutes' WHERE txid = $1", [recorded.txid])
    await proxy.up()
    await expect(litecoind.rpc("getrawtransaction", recorded.txid)).rejects.toThrow()
    await waitFor("the recorded R on the ledger, sent again by the sweep", 40_000, async () =>
      (await litecoind.rpc<string>("getrawtransaction", recorded.txid).catch(() => undefined)) !== undefined ? true : undefined, 300)
    expect((await onChain(recorded.txid)).tag).toBe("R")
    // Sent with its recorded bytes, not made again.
    expect((await db.query("SELECT 1 FROM social_stamps WHERE post_id = $1 AND tag = 'R'", [postId])).length).toBe(1)
    // A block, so the sponsor's chain of unconfirmed fundings stays under the mempool's limit for the tests after.
    await run(ledger().mine(1, randomLedgerKey().address))
  }, 120_000)

  it("a comment whose Change met a database failure is answered, to a retry with the same key, once the database is back", async () => {
    // A persisted request's reply is kept under its key: a database failure kept as the Change's
    // reply answered every retry with the same Idempotency-Key 503 for ever (chaos seed 3, a
    // Postgres restart). It is a defect now: the entity runs the Change again (refuseOrRetry.ts).
    const post = await publish({ body: "comment on me while the database fails" }, aliceSession)
    expect(post.status).toBe(201)
    const postId = post.body.postId as string
    const key = "comment-database-down"
    const comment = () =>
      fetch(`${node.socialUrl}/api/social/posts/${postId}/comments`, {
        method: "POST",
        headers: { authorization: `Bearer ${bobSession}`, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ body: "written across a database failure" }),
        signal: AbortSignal.timeout(8_000)
      }).then(json, () => ({ status: 0, body: "no answer within 8 s" }))
    await db.query("ALTER TABLE social_comments RENAME TO social_comments_away")
    let first: { status: number; body: unknown }
    try {
      first = await comment()
    } finally {
      await db.query("ALTER TABLE social_comments_away RENAME TO social_comments")
    }
    expect(first.status === 0 || first.status >= 500, JSON.stringify(first)).toBe(true)
    const answered = await waitFor("the comment answered to a retry with the same key", 60_000, async () => {
      const r = await comment()
      return r.status === 201 ? r : undefined
    }, 1_000)
    expect(answered.body).toMatchObject({ postId })
    expect((await db.query("SELECT 1 FROM social_comments WHERE post_id = $1", [postId])).length).toBe(1)
    await run(ledger().mine(1, randomLedgerKey().address))
  }, 120_000)

  it("releases a key whose first attempt was refused before anything was written", async () => {
    await db.query("UPDATE social_accounts SET balance_base = 100 WHERE address = $1", [bob.address])
    const key = "bob-topup-then-retry"
    expect(await publish({ body: "hi" }, bobSession, key)).toMatchObject({ status: 402, body: { error: { code: "insufficient_balance" } } })
    await db.query("UPDATE social_accounts SET balance_base = 1000000 WHERE address = $1", [bob.address])
    const ok = await publish({ body: "hi" }, bobSession, key)
    expect(ok.status).toBe(201)
    expect(await chargesFor(ok.body.postId)).toBe(1)
    expect((await publish({ body: "hi" }, bobSession, "")).status).toBe(400)
    // Keys are per account: alice's use of the same key is another post.
    const hers = await publish({ body: "hi" }, aliceSession, key)
    expect(hers.status).toBe(201)
    expect(hers.body.postId).not.toBe(ok.body.postId)
  }, 30_000)

  it("a renewal or a comment retried with the same Idempotency-Key is applied and charged once; another key is another one", async () => {
    const post = await publish({ body: "renew me" }, aliceSession)
    expect(post.status).toBe(201)
    const id = post.body.postId as string
    const renew = (key?: string) => send(`/api/social/posts/${id}/renew`, {}, aliceSession, key)
    const first = await renew("renewal-1")
    expect(first.status).toBe(200)
    const again = await renew("renewal-1")
    expect(again.status).toBe(200)
    expect(again.body.paidUntil).toBe(first.body.paidUntil)
    expect(await chargesFor(id)).toBe(2)
    const other = await renew("renewal-2")
    expect(other.status).toBe(200)
    expect(Date.parse(other.body.paidUntil)).toBeGreaterThan(Date.parse(first.body.paidUntil))
    expect(await chargesFor(id)).toBe(3)
    expect((await renew("\"unterminated")).status).toBe(400)
    expect(await chargesFor(id)).toBe(3)

    const comment = (key?: string) => send(`/api/social/posts/${id}/comments`, { body: "nice" }, bobSession, key)
    expect((await comment("comment-1")).status).toBe(201)
    expect((await comment("comment-1")).status).toBe(201)
    const comments = async () => (await db.query("SELECT 1 FROM social_comments WHERE post_id = $1", [id])).length
    expect(await comments()).toBe(1)
    // Without a key each request is its own comment.
    await comment()
    expect(await comments()).toBe(2)
  }, 60_000)

  it("a key names its post for 24 hours; after that it is free again (a new post, charged)", async () => {
    // The earlier tests' stamps and fundings are still unconfirmed: a block first, or litecoind's
    // mempool chain limit (25 descendants of the sponsor's first funding) refuses the next stamps.
    await run(ledger().mine(1, randomLedgerKey().address))
    const key = "bob-a-day-later"
    const first = await publish({ body: "day one" }, bobSession, key)
    expect(first.status).toBe(201)
    expect((await publish({ body: "day one" }, bobSession, key)).body.postId).toBe(first.body.postId)
    // A day passes for this key.
    await db.query("UPDATE social_post_idempotency SET created_at = now() - interval '25 hours' WHERE account = $1 AND key = $2", [bob.address, key])
    const later = await publish({ body: "day one" }, bobSession, key)
    expect(later.status).toBe(201)
    expect(later.body.postId).not.toBe(first.body.postId)
    expect(await chargesFor(later.body.postId)).toBe(1)
    expect((await db.query("SELECT 1 FROM social_post_idempotency WHERE account = $1 AND key = $2", [bob.address, key])).length).toBe(1)
  }, 30_000)
})
