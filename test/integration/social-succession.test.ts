// Succession end to end: an account's recovery countdown (CHV1G) completes on the Continuity
// entity's own timer (CHV1N), and the account's identity becomes the new address: it keeps its
// #asset id, handle, balance and posts; lookups show the new wallet and the old one in
// previousAddresses; a QR sign-in by the new address reaches the account (it posts, charged to
// the same balance, and takes its old posts down), a QR sign-in by the old address no longer does.
import { ECPairFactory } from "ecpair"
import { Effect, Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { signMessage } from "../../src/chain/message.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import type { NewAccount } from "../../src/social/accounts/Accounts.ts"
import { makeWallet } from "../support/linkWallet.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { createSocialAccount } from "../support/services.ts"
import { waitFor } from "../support/waitFor.ts"

const ECPair = ECPairFactory(ecc)
const PRICE = 25_000n
const countdownMs = 1_500

let db: TestDatabase
let node: RunningNode
let carol: NewAccount
let dave: NewAccount

beforeAll(async () => {
  db = await createTestDatabase("socialsuccession")
  node = await startNode(db.url, {
    SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "10000000",
    SHARDLINE_MESSAGE_POLL_MS: "100",
    SHARDLINE_DEVNET_BLOCK_MS: "0",
    SHARDLINE_SOCIAL_POST_PRICE: PRICE.toString(),
    SHARDLINE_SOCIAL_CONTINUITY_COUNTDOWN_MS: String(countdownMs)
  })
  carol = await createSocialAccount(db.url, "carol")
  dave = await createSocialAccount(db.url, "dave")
}, 60_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const url = (path: string) => `${node.socialUrl}${path}`
const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any, headers: r.headers })
const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url(path), { method: "POST", headers: { "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) }).then(json)
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const balance = async () => BigInt((await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [carol.address]))[0]!.b)

/** The whole QR sign-in: challenge, the wallet signs the callback's message, the browser polls, exchange. */
const qrSignIn = async (address: string, sign: (message: string) => string): Promise<string> => {
  const started = await postJson("/api/public/auth/wallet-challenge", undefined)
  expect(started.status).toBe(200)
  const cookie = /sl_signin=[^;]+/.exec(started.headers.get("set-cookie") ?? "")![0]
  const id = started.body.id as string
  const message = (await fetch(url(`/api/public/auth/wallet-callback?id=${id}`)).then(json)).body.message as string
  const signed = await postJson("/api/public/auth/wallet-callback", { id, address, signature: sign(message) })
  expect(signed.status, JSON.stringify(signed.body)).toBe(200)
  const polled = (await fetch(url(`/api/public/auth/wallet-status?id=${id}`), { headers: { cookie } }).then(json)).body
  const exchanged = await postJson("/api/public/auth/wallet-exchange", { token: polled.token })
  expect(exchanged.status).toBe(200)
  return exchanged.body.token as string
}
const signWithWif = (wif: string) => (message: string) =>
  Either.getOrThrow(signMessage(message, new Uint8Array(ECPair.fromWIF(wif, ledgerParams.network).privateKey!), ledgerParams))

describe("succession switches the account's identity", () => {
  it("CHV1N moves the identity to the new address; the account keeps its asset id, handle, balance and posts", async () => {
    const oldSession = await qrSignIn(carol.address, signWithWif(carol.wif))
    const before = await postJson("/api/social/posts", { body: "before succession" }, bearer(oldSession))
    expect(before.status).toBe(201)

    const successor = makeWallet()
    const newAddress = successor.addresses.p2pkh
    // A succession may not take another account's identity.
    expect((await postJson("/api/social/continuity", { newAddress: dave.address }, bearer(oldSession))).status).toBe(400)
    const started = await postJson("/api/social/continuity", { newAddress }, bearer(oldSession))
    expect(started.status).toBe(201)
    const done = await waitFor("the countdown's CHV1N", countdownMs + 15_000, async () => {
      const [r] = await db.query<{ state: string; completed_txid: string | null }>("SELECT state, completed_txid FROM social_continuity WHERE account = $1", [carol.address])
      return r?.state === "completed" ? r : undefined
    }, 100)
    // CHV1N is on the ledger, from the old identity address.
    const chv1n = await node.run(Effect.flatMap(UtxoLedger, (l) => l.getTx(done.completed_txid!)))
    expect(chv1n.txid).toBe(done.completed_txid)
    const [stamp] = await db.query<{ tag: string; address: string }>("SELECT tag, address FROM social_stamps WHERE txid = $1", [done.completed_txid])
    expect(stamp).toEqual({ tag: "CHV1N", address: carol.address })

    // The old post's lookup now names the new wallet, with the history.
    const lookup = await json(await fetch(url(`/api/public/post/${before.body.postId}`)))
    expect(lookup.body.author).toEqual({ wallet: newAddress, handle: "carol", assetId: carol.assetId, previousAddresses: [carol.address] })
    expect(await (await fetch(url(`/p/${before.body.shortId}`))).text()).toContain(newAddress)

    // A QR sign-in by the new address reaches the account: it posts, charged to the same balance.
    const newSession = await qrSignIn(newAddress, (m) => successor.sign(m))
    const balanceBefore = await balance()
    const after = await postJson("/api/social/posts", { body: "after succession" }, bearer(newSession))
    expect(after.status, JSON.stringify(after.body)).toBe(201)
    expect(balanceBefore - (await balance())).toBe(PRICE)
    const afterLookup = await json(await fetch(url(`/api/public/post/${after.body.shortId}`)))
    expect(afterLookup.body.author).toMatchObject({ wallet: newAddress, assetId: carol.assetId, handle: "carol" })
    // Its stamps still carry the account's #asset id; its manifest names the new wallet as author.
    expect(after.body.opReturn).toMatch(new RegExp(`^CHV1P\\|${after.body.metadataCid}\\|${carol.assetId}\\.`))
    expect((await json(await fetch(url(`/api/stream/${after.body.metadataCid}`)))).body.author).toBe(newAddress)
    const [row] = await db.query<{ author: string }>("SELECT author FROM social_posts WHERE id = $1", [after.body.postId])
    expect(row!.author).toBe(carol.address) // the account's key, unchanged

    // Comments still go out after the succession (their addresses derive from the account's key),
    // the manifest naming the new wallet as author.
    const comment = await postJson(`/api/social/posts/${after.body.postId}/comments`, { body: "still me" }, bearer(newSession))
    expect(comment.status, JSON.stringify(comment.body)).toBe(201)
    expect(comment.body.opReturn).toMatch(new RegExp(`^X\\|bafkrei[a-z2-7]{52}\\|${carol.assetId}\\.`))
    // X carries the comment body (the spec's reading); XM, beside it, the manifest.
    expect(await (await fetch(url(`/api/stream/${comment.body.opReturn.split("|")[1]}`))).text()).toBe("still me")
    const [xm] = await db.query<{ cid: string }>("SELECT s.cid FROM social_stamps s JOIN social_comments c ON c.address = s.address WHERE c.txid = $1 AND s.tag = 'XM'", [comment.body.txid])
    expect((await json(await fetch(url(`/api/stream/${xm!.cid}`)))).body).toMatchObject({ type: "comment", post: after.body.metadataCid, author: newAddress })

    // The new identity takes the old post down; no second countdown (the new identity's key is the member's).
    expect((await postJson(`/api/social/posts/${before.body.postId}/takedown`, undefined, bearer(newSession))).status).toBe(200)
    expect((await postJson("/api/social/continuity", { newAddress: makeWallet().addresses.p2pkh }, bearer(newSession))).status).toBe(409)

    // The old address no longer reaches the account: neither its earlier session nor a new QR sign-in.
    const oldAgain = await qrSignIn(carol.address, signWithWif(carol.wif))
    for (const token of [oldSession, oldAgain]) {
      expect(await postJson("/api/social/posts", { body: "as the old address" }, bearer(token))).toMatchObject({ status: 404, body: { error: { code: "not_found" } } })
      expect((await postJson(`/api/social/posts/${after.body.postId}/takedown`, undefined, bearer(token))).status).toBe(403)
    }
    expect((await db.query("SELECT 1 FROM social_posts WHERE author = $1", [carol.address])).length).toBe(2)
    expect(await db.query("SELECT from_address, to_address, txid FROM social_successions WHERE account = $1", [carol.address]))
      .toEqual([{ from_address: carol.address, to_address: newAddress, txid: done.completed_txid }])

    // The chain-only timeline by the new address walks the account's own chain: CHV1G, CHV1N and both posts.
    await node.run(Effect.flatMap(UtxoLedger, (l) => l.mine(1, carol.address)))
    const timeline = await json(await fetch(url(`/api/public/timeline/${newAddress}`)))
    expect(timeline.status).toBe(200)
    const events = timeline.body.events as Array<{ tag: string; cid: string; address: string }>
    expect(events.filter((e) => e.address === carol.address).map((e) => e.tag)).toEqual(["CHV1G", "CHV1N"])
    for (const p of [before.body, after.body]) expect(events.some((e) => e.tag === "CHV1P" && e.cid === p.metadataCid)).toBe(true)
  }, 60_000)
})
