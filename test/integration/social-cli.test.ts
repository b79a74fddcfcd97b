// `social account create | post | takedown | moderate | timeline` as a child process against a
// running node (INTERFACES.md, "Setup commands"): the same Post entity the HTTP composer uses.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { keyWalletAddress } from "../../src/chain/ledger/keyWallet.ts"
import { rawCid } from "../../src/crypto/cid.ts"
import { cli, cliJson, cliRefused } from "../support/cli.ts"
import { createSession } from "../support/services.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"

const ECPair = ECPairFactory(ecc)
let db: TestDatabase
let node: RunningNode
let env: Record<string, string>

beforeAll(async () => {
  db = await createTestDatabase("socialcli")
  node = await startNode(db.url, { SHARDLINE_DEVNET_BLOCK_MS: "0", SHARDLINE_MESSAGE_POLL_MS: "100" })
  // No port setting: the CLI finds the running node's listener by the database (issue 23.17).
  env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DATA_DIR: node.config.dataDir, SHARDLINE_MESSAGE_POLL_MS: "100" }
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("social CLI", () => {
  let account: { address: string; assetId: string; handle: string; wif: string }
  let post: { postId: string; shortId: string; metadataCid: string; mediaCids: string[]; txHash: string; opReturn: string }

  it("account create prints an address, a 6-character asset id, the handle and a WIF whose address it is", async () => {
    account = cliJson(await cli(["social", "account", "create", "--handle", "carol", "--json"], env))
    expect(account.handle).toBe("carol")
    expect(account.assetId).toMatch(/^[A-Z0-9]{6}$/)
    const key = ECPair.fromWIF(account.wif, ledgerParams.network)
    expect(keyWalletAddress(new Uint8Array(key.privateKey!), ledgerParams)).toBe(account.address)
    const [row] = await db.query<{ balance_base: string }>("SELECT balance_base::text AS balance_base FROM social_accounts WHERE address = $1", [account.address])
    expect(BigInt(row!.balance_base)).toBeGreaterThan(0n)
    expect(cliRefused(await cli(["social", "account", "create", "--handle", "carol", "--json"], env))).toMatch(/taken/)
    expect(cliRefused(await cli(["social", "account", "create", "--handle", "Bad Name", "--json"], env))).toMatch(/handle/)
  }, 120_000)

  it("post pins the media, stamps and charges, and prints the receipt", async () => {
    const file = join(node.config.dataDir, "photo.png")
    const bytes = Buffer.from("\x89PNG\r\n\x1a\n fake png bytes for a test")
    writeFileSync(file, bytes)
    post = cliJson(await cli(["social", "post", "--account", account.address, "--body", "hello from the CLI", "--tags", "a,b", "--media", file, "--json"], env))
    expect(post.mediaCids).toEqual([rawCid(bytes)])
    expect(post.opReturn).toMatch(new RegExp(`^CHV1P\\|${post.metadataCid}\\|${account.assetId}\\.[0-9a-z]+$`))
    expect(post.txHash).toMatch(/^[0-9a-f]{64}$/)
    const lookup = (await (await fetch(`${node.socialUrl}/api/public/post/${post.shortId}`)).json()) as any
    expect(lookup.post).toMatchObject({ body: "hello from the CLI", tags: ["a", "b"] })
    expect(lookup.proof.txHash).toBe(post.txHash)
    expect(cliRefused(await cli(["social", "post", "--account", "TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K", "--body", "x", "--json"], env))).toMatch(/unknown_account/)
  }, 120_000)

  it("moderate pulls a post (D), takedown of a pulled post is refused; timeline shows the stamps", async () => {
    const second = cliJson<{ postId: string; shortId: string }>(await cli(["social", "post", "--account", account.address, "--body", "second", "--json"], env))
    const pulled = cliJson<{ state: string; txid: string; opReturn: string }>(await cli(["social", "moderate", "--post", second.shortId, "--reason", "spam", "--json"], env))
    expect(pulled).toMatchObject({ state: "moderated", txid: expect.stringMatching(/^[0-9a-f]{64}$/), opReturn: expect.stringMatching(/^D\|/) })
    expect(cliRefused(await cli(["social", "takedown", "--post", second.postId, "--json"], env))).toMatch(/post_closed/)
    const down = cliJson<{ state: string; opReturn: string }>(await cli(["social", "takedown", "--post", post.postId, "--json"], env))
    expect(down).toMatchObject({ state: "taken_down", opReturn: expect.stringMatching(/^T\|/) })
    await cli(["devnet", "mine", "--json"], env)
    const timeline = cliJson<{ events: Array<{ tag: string; address: string }> }>(await cli(["social", "timeline", "--address", account.address, "--json"], env))
    expect(timeline.events.map((e) => e.tag)).toEqual(expect.arrayContaining(["C", "CHV1P", "P", "T", "D"]))
    // The media post's C, CHV1P, P, T; the text-only post's C (its body), CHV1P, P, D.
    expect(timeline.events).toHaveLength(8)
  }, 180_000)

  it("live add registers a channel, offline until live stream sets its playlist; the printed URLs are the running node's", async () => {
    const added = cliJson<{ streamId: string; embed: string }>(await cli(["social", "live", "add", "--stream", "cli-chan", "--wallet", account.address, "--title", "Night <show>", "--json"], env))
    expect(added).toMatchObject({ streamId: "cli-chan", embed: `${node.socialUrl}/embed/live/cli-chan` })
    const offline = await (await fetch(`${node.socialUrl}/embed/live/by-wallet/${account.address}`)).text()
    expect(offline).toContain("Night &lt;show&gt;")
    expect(offline).toContain(`data-live="offline"`)
    expect((await cli(["social", "live", "add", "--stream", "bad id!", "--wallet", account.address, "--title", "x"], env)).code).toBe(2)

    const session = (await createSession(db.url, account.address)).token
    const uploaded = (await (await fetch(`${node.socialUrl}/api/social/upload`, {
      method: "POST", headers: { authorization: `Bearer ${session}`, "content-type": "application/vnd.apple.mpegurl" }, body: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"
    })).json()) as { cid: string }
    expect(cliRefused(await cli(["social", "live", "stream", "--stream", "cli-chan", "--playlist", post.mediaCids[0]!, "--json"], env))).toMatch(/not an HLS playlist/)
    expect(cliRefused(await cli(["social", "live", "stream", "--stream", "nochan", "--playlist", uploaded.cid, "--json"], env))).toMatch(/no live channel/)
    expect((await cli(["social", "live", "stream", "--stream", "cli-chan", "--json"], env)).code).toBe(2)
    const streaming = cliJson<{ playlistCid: string; playlist: string }>(await cli(["social", "live", "stream", "--stream", "cli-chan", "--playlist", uploaded.cid, "--json"], env))
    expect(streaming).toMatchObject({ playlistCid: uploaded.cid, playlist: `${node.socialUrl}/live/cli-chan/index.m3u8` })
    const player = await (await fetch(added.embed)).text()
    expect(player).toContain(`<video src="${streaming.playlist}"`)
    expect((await fetch(streaming.playlist)).status).toBe(200)
    cliJson(await cli(["social", "live", "stream", "--stream", "cli-chan", "--offline", "--json"], env))
    expect(await (await fetch(added.embed)).text()).toContain(`data-live="offline"`)
  }, 90_000)
})
