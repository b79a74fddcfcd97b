// Issue 27.5: a moderator's pull blocks the content, not only the post. Before, after `social
// moderate` the media was 410, and another account publishing a post naming the same CID made the
// bytes served again (200). Now the pull blocks the post's CIDs: 410 content_blocked under any
// post, a new post naming one is refused 403 media_blocked (nothing charged), until an operator
// lifts the block with `social moderate --lift CID`.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { rawCid } from "../../src/crypto/cid.ts"
import type { NewAccount } from "../../src/social/accounts/Accounts.ts"
import { cli, cliJson, cliRefused } from "../support/cli.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { createSession, createSocialAccount } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
let env: Record<string, string>
let alice: NewAccount
let bob: NewAccount
let aliceSession: string
let bobSession: string

beforeAll(async () => {
  db = await createTestDatabase("socialmod")
  node = await startNode(db.url, { SHARDLINE_DEVNET_BLOCK_MS: "0", SHARDLINE_MESSAGE_POLL_MS: "100", SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "10000000" })
  env = {
    SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DATA_DIR: node.config.dataDir,
    SHARDLINE_SOCIAL_HTTP_PORT: String(node.config.socialHttpPort), SHARDLINE_MESSAGE_POLL_MS: "100"
  }
  alice = await createSocialAccount(db.url, "alice")
  bob = await createSocialAccount(db.url, "bob")
  aliceSession = (await createSession(db.url, alice.address)).token
  bobSession = (await createSession(db.url, bob.address)).token
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const url = (path: string) => `${node.socialUrl}${path}`
const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any })
const upload = (bytes: Uint8Array, token: string) =>
  fetch(url("/api/social/upload"), { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "image/png" }, body: bytes })
const publish = (body: Record<string, unknown>, token: string) =>
  fetch(url("/api/social/posts"), { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) })
const stream = (cid: string) => fetch(url(`/api/stream/${cid}`))
const balance = async (address: string) =>
  BigInt((await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [address]))[0]!.b)
/** The node's served answers are trusted for up to 1 s (served.ts); a change shows within it. */
const afterCache = () => new Promise((r) => setTimeout(r, 1_100))

const picture = Buffer.from("\x89PNG\r\n\x1a\n a picture a moderator will pull " + "x".repeat(500))
const cid = rawCid(picture)
const other = Buffer.from("\x89PNG\r\n\x1a\n an unrelated picture")

describe("a moderator's pull blocks the content (CID), not only the post", () => {
  let pulled: { postId: string; metadataCid: string }
  let earlier: { postId: string }

  it("pull: 410 content_blocked for the media, even under a post published before the pull; the CLI names the blocked CIDs", async () => {
    expect((await json(await upload(picture, aliceSession))).status).toBe(201)
    const a = await json(await publish({ body: "original", media: [cid] }, aliceSession))
    expect(a.status).toBe(201)
    pulled = a.body
    // Bob posted the same bytes before the pull.
    const b = await json(await publish({ body: "a copy", media: [cid] }, bobSession))
    expect(b.status).toBe(201)
    earlier = b.body
    expect((await stream(cid)).status).toBe(200)

    const out = cliJson<{ state: string; blockedCids: Array<string> }>(await cli(["social", "moderate", "--post", pulled.postId, "--reason", "spam", "--json"], env))
    expect(out.state).toBe("moderated")
    expect(out.blockedCids.sort()).toEqual([cid, pulled.metadataCid].sort())
    const gone = await json(await stream(cid))
    expect(gone).toEqual({ status: 410, body: { error: { code: "content_blocked", message: expect.stringMatching(/moderator/) } } })
    expect((await json(await stream(pulled.metadataCid))).body.error.code).toBe("content_blocked")
    // A ranged read (the edge's hot path) is refused too.
    expect((await fetch(url(`/api/stream/${cid}`), { headers: { range: "bytes=0-9" } })).status).toBe(410)
    // Bob's earlier post is still up (its page, its lookup); only the pulled bytes are not served.
    expect((await json(await fetch(url(`/api/public/post/${earlier.postId}`)))).body.post.state).toBe("hosted")
  })

  it("re-posting the same bytes from another account is refused 403 media_blocked, nothing charged; re-uploading serves nothing", async () => {
    const before = await balance(bob.address)
    const again = await json(await publish({ body: "trying again", media: [cid] }, bobSession))
    expect(again.status).toBe(403)
    expect(again.body).toEqual({ error: { code: "media_blocked", message: `media ${cid} was pulled by a moderator and cannot be published` } })
    expect(await balance(bob.address)).toBe(before)
    // The same bytes uploaded again land on the same CID, which stays blocked.
    expect((await json(await upload(picture, bobSession))).body.cid).toBe(cid)
    expect((await stream(cid)).status).toBe(410)
    // Other content is untouched.
    const otherCid = (await json(await upload(other, bobSession))).body.cid as string
    expect((await publish({ body: "fine", media: [otherCid] }, bobSession)).status).toBe(201)
    expect((await stream(otherCid)).status).toBe(200)
  })

  it("a pull of the same post again keeps its block; the operator lifts it with `social moderate --lift CID`", async () => {
    const repeat = cliJson<{ state: string; blockedCids: Array<string> }>(await cli(["social", "moderate", "--post", pulled.postId, "--reason", "spam", "--json"], env))
    expect(repeat.blockedCids).toContain(cid)
    expect(cliRefused(await cli(["social", "moderate", "--lift", "not-a-cid", "--json"], env))).toMatch(/--lift/)
    const lifted = cliJson<{ cid: string; blocked: boolean; lifted: Array<{ postId: string; liftedAt: string }> }>(
      await cli(["social", "moderate", "--lift", cid, "--reason", "appeal upheld", "--json"], env))
    expect(lifted).toEqual({ cid, blocked: false, lifted: [{ postId: pulled.postId, liftedAt: expect.any(String) }] })
    const [row] = await db.query<{ lift_reason: string; reason: string }>("SELECT reason, lift_reason FROM social_blocked_cids WHERE post_id = $1 AND cid = $2", [pulled.postId, cid])
    expect(row).toEqual({ reason: "spam", lift_reason: "appeal upheld" })
    // Served again through Bob's post, which still holds it; the pulled post stays pulled.
    await afterCache()
    expect((await stream(cid)).status).toBe(200)
    expect((await json(await fetch(url(`/api/public/post/${pulled.postId}`)))).body.post.state).toBe("moderated")
    expect((await publish({ body: "back", media: [cid] }, bobSession)).status).toBe(201)
    // Nothing left to lift; the manifest's own block still holds until it is lifted too.
    expect(cliRefused(await cli(["social", "moderate", "--lift", cid, "--json"], env))).toMatch(/no moderation block/)
    expect((await stream(pulled.metadataCid)).status).toBe(410)
  })
})
