// Chaos seed 1 (issue 25) as a regression: a client that gives up on a post change while the
// ledger hangs must not cut the change in half. The chaos workload's HTTP client stops waiting
// after 15 s and asks again with the same Idempotency-Key; before the fix, the node interrupted
// the Post entity's Change where it stood (the cluster forwards a caller's interrupt to a
// persisted request), after the comment and its owed X and XM were committed but before the
// stamps were made or scheduled, and stored "interrupted" as the Change's reply. Every retry with
// the key was the same Change, answered from that stored reply (never a 2xx), and the owed stamps
// stayed unpaid with no timer to make them: "2 owed social stamps unsent, 2 social requests never
// answered". Here: the ledger hangs (a forwarder that accepts and never answers), a comment is
// sent, the client aborts once the owed X is committed; then the ledger is back and the same
// request is sent again. It is answered 201 with the one comment, charged once, and X then XM
// land on the chain once each.
//
// The client leaves, and the retry comes, while the Change is inside its hung ledger call (the
// fee sponsor's scantxoutset, held by the forwarder), and the heap is collected then: on Node 20
// that collection took the call's timeout signal (AbortSignal.timeout inside AbortSignal.any,
// nodejs/node#57736), the call never ended, the Change never answered, and every retry waited
// on its reply for ever (loaded suite runs, where a collection came during the 15 s wait). The
// call's limit is now an Effect timer (rpcLedger.ts). Aborting only once the owed XM was
// committed left it to chance whether the call was held or went through after `up()`.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestDatabase } from "../../harness/db.ts"
import { collectGarbage } from "../support/gc.ts"
import type { Litecoind } from "../support/litecoind.ts"
import type { RunningNode } from "../support/node.ts"
import { type OutageWorld, startOutageWorld } from "../support/socialOutage.ts"
import type { TcpProxy } from "../support/tcpProxy.ts"
import { waitFor } from "../support/waitFor.ts"

const PRICE = 25_000n
let world: OutageWorld
let litecoind: Litecoind
let proxy: TcpProxy
let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  world = await startOutageWorld("socialabort", PRICE)
  ;({ litecoind, proxy, db, node } = world)
}, 120_000)
afterAll(async () => {
  await world?.stop()
})

const post = (path: string, token: string, body: unknown, init: { key?: string; signal?: AbortSignal } = {}) =>
  fetch(`${node.socialUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...(init.key === undefined ? {} : { "idempotency-key": init.key }) },
    body: JSON.stringify(body),
    ...(init.signal === undefined ? {} : { signal: init.signal })
  })
const balance = async (address: string) =>
  BigInt((await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [address]))[0]!.b)

describe("a post change whose client gives up mid-way (chaos seed 1)", () => {
  it("runs to its end: the retry with the same key is answered, charged once, and its owed stamps land once", async () => {
    const published = await post("/api/social/posts", world.aliceSession, { body: "commented while the ledger hangs" })
    expect(published.status).toBe(201)
    const postId = ((await published.json()) as { postId: string }).postId
    const bobBefore = await balance(world.bob.address)

    await proxy.hang()
    const abort = new AbortController()
    const first = post(`/api/social/posts/${postId}/comments`, world.bobSession, { body: "given up on" }, { key: "seed1-comment", signal: abort.signal })
      .then((r) => ({ status: r.status }), (e: unknown) => ({ aborted: String(e) }))
    // The comment and its owed X and XM are committed; the stamp waits on the hung ledger (its
    // first coin: the sponsor lists its unspent outputs). The client leaves.
    await waitFor("the comment's owed stamps committed", 30_000, async () =>
      (await db.query("SELECT 1 FROM social_owed_stamps WHERE post_id = $1 AND tag = 'XM'", [postId])).length === 1 ? true : undefined, 50)
    await waitFor("the stamp's ledger call held by the hung forwarder", 30_000, async () =>
      proxy.heldRequests().some((r) => r.includes("scantxoutset")) ? true : undefined, 20)
    abort.abort()
    expect(await first).toHaveProperty("aborted")
    // The node runs in this process: the collection that once took the held call's timeout.
    collectGarbage()
    await proxy.up()

    // The same request again, as a client does after a timeout: one answer, the first request's.
    // Each attempt gives up after 20 s as the chaos client does (a retry that waits on the first
    // request's reply forever then fails here, named, rather than as the test's timeout).
    const retried = await waitFor("the retried comment answered below 500", 90_000, async () => {
      const r = await post(`/api/social/posts/${postId}/comments`, world.bobSession, { body: "given up on" }, { key: "seed1-comment", signal: AbortSignal.timeout(20_000) })
        .catch(() => undefined)
      if (r === undefined) return undefined
      const body = await r.json() as Record<string, unknown>
      return r.status < 500 ? { status: r.status, body } : undefined
    }, 500)
    expect(retried.status, JSON.stringify(retried.body)).toBe(201)
    expect((await db.query("SELECT 1 FROM social_comments WHERE post_id = $1", [postId])).length).toBe(1)
    expect(bobBefore - (await balance(world.bob.address))).toBe(PRICE)

    await waitFor("the owed X and XM made and nothing pending", 60_000, async () => {
      const unpaid = await db.query("SELECT 1 FROM social_owed_stamps WHERE post_id = $1 AND txid IS NULL", [postId])
      const pending = await db.query("SELECT 1 FROM social_stamping_pending WHERE post_id = $1", [postId])
      return unpaid.length === 0 && pending.length === 0 ? true : undefined
    }, 200)
    const stamps = await db.query<{ tag: string; txid: string }>("SELECT tag, txid FROM social_stamps WHERE post_id = $1 AND tag IN ('X', 'XM') ORDER BY seq", [postId])
    expect(stamps.map((s) => s.tag)).toEqual(["X", "XM"])
    for (const s of stamps) expect(typeof (await litecoind.rpc<string>("getrawtransaction", s.txid)), s.tag).toBe("string")
  }, 300_000)

  // Two retries of the same request on one node while the Change is held: the cluster answers the
  // first by polling storage for the Change's reply and the second joins that poll; the first's
  // client leaving stranded the second on a latch nobody opened (@effect/cluster 0.60,
  // Runners.replyFromStorage), though the reply was stored 15 s later. Each request is now waited
  // for once per node, to its reply (platform/entity/replyWaits.ts).
  it("a retry that joined another's wait is answered when the other's client leaves", async () => {
    const published = await post("/api/social/posts", world.aliceSession, { body: "commented twice over" })
    expect(published.status).toBe(201)
    const postId = ((await published.json()) as { postId: string }).postId
    const bobBefore = await balance(world.bob.address)
    const send = (signal: AbortSignal) =>
      post(`/api/social/posts/${postId}/comments`, world.bobSession, { body: "asked three times" }, { key: "joined-wait", signal })
        .then(async (r) => ({ status: r.status, body: await r.json() as Record<string, unknown> }), (e: unknown) => ({ status: 0, body: { gaveUp: String(e) } }))

    await proxy.hang()
    const first = new AbortController()
    const original = send(first.signal)
    await waitFor("the comment's stamp held by the hung forwarder", 30_000, async () =>
      proxy.heldRequests().some((r) => r.includes("scantxoutset")) ? true : undefined, 20)
    first.abort()
    expect((await original).status).toBe(0)
    const leaving = new AbortController()
    const retryA = send(leaving.signal)
    // A waits on the Change's reply before B comes and joins it; then A's client leaves.
    await new Promise((r) => setTimeout(r, 1_000))
    const retryB = send(AbortSignal.timeout(45_000))
    await new Promise((r) => setTimeout(r, 1_000))
    leaving.abort()
    expect((await retryA).status).toBe(0)
    await proxy.up()

    // The held call ends on its 15 s timeout, the Change answers (its stamps on the timer), B gets that answer.
    const b = await retryB
    expect(b.status, JSON.stringify(b.body)).toBe(201)
    expect((await db.query("SELECT 1 FROM social_comments WHERE post_id = $1", [postId])).length).toBe(1)
    expect(bobBefore - (await balance(world.bob.address))).toBe(PRICE)
  }, 120_000)
})
