// A wallet link across two nodes without SHARDLINE_DESK_PUBLIC_URL (issue 25's leftover; each node's
// own URL is then its own port, as on `npm run cluster`): node A issues the token and serves its
// manifest, node B serves it too and redeems it once A is gone (so the token's DeskLinkToken
// entity runs on B). The manifest names the URL the token was issued for on every node, and the
// entity checks the envelope against that; an envelope signed for B's origin is still refused.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { configLayer } from "../../src/config.ts"
import { issueDeskLinkToken } from "../../src/desk/identity/issueLinkToken.ts"
import { deskPayload, makeWallet, type TestWallet } from "../support/linkWallet.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { pgClientLayer } from "../support/pg.ts"

let db: TestDatabase
let a: RunningNode | undefined
let b: RunningNode
const path = "/api/public/v1/wallet-link"

beforeAll(async () => {
  db = await createTestDatabase("wlnodes2")
  // Two nodes on one database are a cluster: the socket topology (two `single` nodes have no
  // transport between them, and a message to the other's shards waits for ever: ops-redaction.test.ts).
  // Slower lock timings: two nodes in one event loop; A leaves cleanly.
  const vars = {
    SHARDLINE_TOPOLOGY: "socket", SHARDLINE_DEVNET_PER_NODE: "true",
    SHARDLINE_MESSAGE_POLL_MS: "200", SHARDLINE_SHARD_LOCK_REFRESH_MS: "2000", SHARDLINE_SHARD_LOCK_EXPIRATION_MS: "8000"
  }
  a = await startNode(db.url, vars)
  b = await startNode(db.url, vars)
}, 180_000)
afterAll(async () => {
  await a?.stop()
  await b?.stop()
  await db?.drop()
})

const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as Record<string, any> })
const manifestAt = async (url: string) => json(await fetch(url, { headers: { accept: "application/json" } }))
const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(json)
/** Runs inside `node`, with a database client and the node's config beside its services. */
const inNode = <A, E>(node: RunningNode, effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)
const issueOnA = () => inNode(a!, issueDeskLinkToken({ allowRebind: false }))
const sign = (payload: ReturnType<typeof deskPayload>, wallet: TestWallet) => ({ payload, signature: wallet.signJson(payload, "compressed"), address: wallet.addressFor.compressed })

describe("a desk wallet link issued on one node, redeemed on another (no public URL)", () => {
  it("links with the issuing node's manifest on the other node, and refuses an envelope signed for the other node's origin", async () => {
    const issued = await issueOnA()
    const forged = await issueOnA()
    expect(issued.url).toBe(`${a!.deskUrl}${path}?token=${issued.token}`)
    const fromA = await manifestAt(issued.url)
    expect(fromA.status).toBe(200)
    expect(fromA.body).toMatchObject({ from: a!.deskUrl, callback_url: issued.url })

    // A leaves: every shard, and so both tokens' entities, move to B.
    const a0 = a!
    await a0.stop()
    a = undefined

    // The envelope made from A's manifest, posted to B's bare path: linked.
    const linker = makeWallet()
    const linked = await post(`${b.deskUrl}${path}`, sign(deskPayload(fromA.body, linker), linker))
    expect(linked.status, JSON.stringify(linked.body)).toBe(200)
    expect(linked.body.signing_address).toBe(linker.addresses.p2pkh)

    // B serves a token A issued with A's URL, not its own.
    const fromB = await manifestAt(`${b.deskUrl}${path}?token=${forged.token}`)
    expect(fromB.status).toBe(200)
    expect(fromB.body).toMatchObject({ from: a0.deskUrl, callback_url: `${a0.deskUrl}${path}?token=${forged.token}` })
    // A payload signed for B's origin and B's link URL (what a manifest built from B's own port
    // named) is a signature for another origin than the token's: refused, and so is B's origin alone.
    const wallet = makeWallet()
    const other = deskPayload({ ...fromB.body, from: b.deskUrl, callback_url: `${b.deskUrl}${path}?token=${forged.token}` }, wallet)
    const refused = await post(`${b.deskUrl}${path}?token=${forged.token}`, sign(other, wallet))
    expect(refused).toMatchObject({ status: 401, body: { error: { code: "invalid_signature", message: expect.stringContaining("'from' differs") } } })
    const wrongOrigin = await post(`${b.deskUrl}${path}`, sign(deskPayload({ ...fromB.body, from: b.deskUrl }, wallet), wallet))
    expect(wrongOrigin).toMatchObject({ status: 401, body: { error: { code: "invalid_signature", message: expect.stringContaining("'from' differs") } } })

    const rows = await inNode(b, Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ status: string; base_url: string }>`SELECT status, base_url FROM link_tokens ORDER BY issued_at`))
    expect(rows.map((r) => r.base_url)).toEqual([a0.deskUrl, a0.deskUrl])
    expect(rows.map((r) => r.status).sort()).toEqual(["issued", "used"])
  }, 150_000) // A's shards reach B only after its locks are released: slow on a loaded box (60 s was short in a suite run)
})
