// Every stamp the service owes lands exactly once, on the Post entity's own durable timer, when the
// ledger (litecoind -regtest, reached through a TCP forwarder that is switched off: real refused
// connections) is unreachable at the moment the stamp is due:
// - a comment (X, from the commenter's own comment address), a renewal (R), a metadata update (M)
//   and a takedown (T) of service-keyed accounts take effect and are charged once while the ledger
//   is down, answered with txid null; when it is back each stamp is on the chain once;
// - a member-signed publish (xpub-only account) whose signed stamps are recorded while the ledger
//   is down is answered 200 with stamping "pending", and the entity sends the recorded bytes when
//   the ledger is back (before, the member had to send the signatures again).
// "Exactly once" is read from the chain itself: every OP_RETURN in the blocks mined since the
// outage and in the mempool, decoded, counted per (address, tag, cid).
import { randomBytes } from "node:crypto"
import { BIP32Factory } from "bip32"
import { Psbt, Transaction, payments } from "bitcoinjs-lib"
import { Effect, Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestDatabase } from "../../harness/db.ts"
import { unwrap } from "../../harness/either.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { extendedKeysAt } from "../../src/chain/keys.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import type { NewAccount } from "../../src/social/accounts/Accounts.ts"
import { decodeStamp } from "../../src/social/posts/opReturn.ts"
import { makeWallet } from "../support/linkWallet.ts"
import type { Litecoind } from "../support/litecoind.ts"
import type { RunningNode } from "../support/node.ts"
import { createSession } from "../support/services.ts"
import { type OutageWorld, startOutageWorld } from "../support/socialOutage.ts"
import type { TcpProxy } from "../support/tcpProxy.ts"
import { waitFor } from "../support/waitFor.ts"

const bip32 = BIP32Factory(ecc)
const network = ledgerParams.network
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
// The xpub-only member: its keys only here.
const seed = randomBytes(32)
let member: string
let memberSession: string
let startHeight: number

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

beforeAll(async () => {
  world = await startOutageWorld("socialowed", PRICE)
  ;({ litecoind, proxy, db, node, alice, aliceSession, bob, bobSession, ledger } = world)
  // An account linked by xpub only (as the wallet-link flow leaves it: no sealed seed).
  member = makeWallet(seed).addresses.p2pkh
  await db.query("INSERT INTO social_accounts (address, asset_id, balance_base, xpub, xpub_path) VALUES ($1, $2, 1000000, $3, $4)",
    [member, randomBytes(3).toString("hex").toUpperCase(), unwrap(extendedKeysAt(seed, "m/44'/696969'/1101'")).xpub, "m/44'/696969'/1101'"])
  memberSession = (await createSession(db.url, member)).token
  startHeight = await litecoind.rpc<number>("getblockcount")
}, 120_000)
afterAll(async () => {
  await world?.stop()
})

const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any })
const call = (method: string, path: string, token: string, body?: unknown) =>
  fetch(`${node.socialUrl}${path}`, {
    method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }).then(json)
const balance = async (address: string) =>
  BigInt((await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [address]))[0]!.b)

/** Every stamp on the chain since the test began (blocks and mempool): "address tag cid" → txids. */
const stampsOnChain = async () => {
  const found = new Map<string, Array<string>>()
  const add = (hex: string) => {
    const tx = Transaction.fromHex(hex)
    const out = tx.outs[0]
    if (out === undefined || out.script[0] !== 0x6a) return
    const decoded = decodeStamp(Buffer.from(payments.embed({ output: out.script }).data![0]!))
    if (Either.isLeft(decoded)) return
    const change = tx.outs[1] === undefined ? "?" : payments.p2pkh({ output: tx.outs[1].script, network }).address!
    const key = `${change} ${decoded.right.tag} ${decoded.right.cid}`
    found.set(key, [...(found.get(key) ?? []), tx.getId()])
  }
  const tip = await litecoind.rpc<number>("getblockcount")
  for (let h = startHeight + 1; h <= tip; h++) {
    const block = await litecoind.rpc<{ tx: Array<{ hex: string }> }>("getblock", await litecoind.rpc<string>("getblockhash", h), 2)
    for (const tx of block.tx) add(tx.hex)
  }
  for (const txid of await litecoind.rpc<Array<string>>("getrawmempool")) add(await litecoind.rpc<string>("getrawtransaction", txid))
  return found
}

describe("stamps owed while the ledger is unreachable", () => {
  it("comment, renewal, metadata and takedown take effect, charged once; each stamp lands exactly once when the ledger is back", async () => {
    const post = await call("POST", "/api/social/posts", aliceSession, { body: "commented, renewed and edited" })
    const other = await call("POST", "/api/social/posts", aliceSession, { body: "taken down" })
    expect([post.status, other.status]).toEqual([201, 201])
    const aliceBefore = await balance(alice.address)
    const bobBefore = await balance(bob.address)

    await proxy.down()
    const comment = await call("POST", `/api/social/posts/${post.body.postId}/comments`, bobSession, { body: "written while the ledger was down" })
    expect(comment.status, JSON.stringify(comment.body)).toBe(201)
    expect(comment.body.txid).toBeNull()
    const renew = await call("POST", `/api/social/posts/${post.body.postId}/renew`, aliceSession)
    expect(renew.status, JSON.stringify(renew.body)).toBe(200)
    expect(renew.body.txid).toBeNull()
    const edit = await call("POST", `/api/social/posts/${post.body.postId}/metadata`, aliceSession, { body: "edited while down" })
    expect(edit.status, JSON.stringify(edit.body)).toBe(200)
    expect(edit.body.txid).toBeNull()
    const down = await call("POST", `/api/social/posts/${other.body.postId}/takedown`, aliceSession)
    expect(down.status, JSON.stringify(down.body)).toBe(200)
    expect(down.body).toMatchObject({ state: "taken_down", txid: null })
    // In effect and charged once, though not stamped yet.
    expect(aliceBefore - (await balance(alice.address))).toBe(PRICE)
    expect(bobBefore - (await balance(bob.address))).toBe(PRICE)
    expect((await call("GET", `/api/public/post/${post.body.postId}`, aliceSession)).body.post.body).toBe("edited while down")
    // Each owed stamp is recorded with its action. X and XM (a new comment address, its coin from
    // the sponsor) could not be made; R, M and T (spending their address's last change) were made
    // and recorded but their broadcast failed: the ledger does not know them.
    const owed = await db.query<{ tag: string; txid: string | null }>("SELECT tag, txid FROM social_owed_stamps ORDER BY id")
    expect(owed.map((o) => o.tag)).toEqual(["X", "XM", "R", "M", "T"])
    expect(owed[0]!.txid).toBeNull()
    expect(owed[1]!.txid).toBeNull()
    for (const o of owed.slice(2)) {
      if (o.txid === null) continue
      const known = await litecoind.rpc<string>("getrawtransaction", o.txid).then(() => true, () => false)
      expect(known, o.tag).toBe(false)
    }
    await waitFor("failed retries on both posts", 20_000, async () => {
      const rows = await db.query<{ attempts: number }>("SELECT attempts FROM social_stamping_pending WHERE post_id IN ($1, $2)", [post.body.postId, other.body.postId])
      return rows.length === 2 && rows.every((r) => r.attempts >= 1) ? true : undefined
    })

    await proxy.up()
    await waitFor("every owed stamp made and nothing pending", 30_000, async () => {
      const unpaid = await db.query("SELECT 1 FROM social_owed_stamps WHERE txid IS NULL")
      const pending = await db.query("SELECT 1 FROM social_stamping_pending")
      return unpaid.length === 0 && pending.length === 0 ? true : undefined
    }, 200)
    await run(ledger().mine(1, randomLedgerKey().address))

    const rows = await db.query<{ tag: string; cid: string; txid: string; address: string; post_id: string }>(
      "SELECT tag, cid, txid, address, post_id::text AS post_id FROM social_stamps WHERE tag IN ('X', 'XM', 'R', 'M', 'T') ORDER BY seq")
    expect(rows.map((r) => r.tag).sort()).toEqual(["M", "R", "T", "X", "XM"])
    const chain = await stampsOnChain()
    for (const r of rows) {
      // On the chain once, from the address the service recorded, with the recorded txid.
      expect(chain.get(`${r.address} ${r.tag} ${r.cid}`), `${r.tag}`).toEqual([r.txid])
      const tx = await litecoind.rpc<{ confirmations: number }>("getrawtransaction", r.txid, true)
      expect(tx.confirmations).toBeGreaterThanOrEqual(1)
    }
    const [c] = await db.query<{ txid: string; address: string; body_cid: string; manifest_cid: string }>("SELECT txid, address, body_cid, manifest_cid FROM social_comments")
    const x = rows.find((r) => r.tag === "X")!
    const xm = rows.find((r) => r.tag === "XM")!
    // X carries the comment body (the spec's reading), XM after it on the same address the manifest.
    expect(c).toEqual({ txid: x.txid, address: x.address, body_cid: x.cid, manifest_cid: xm.cid })
    expect(xm.address).toBe(x.address)
    expect(x.address).not.toBe(rows.find((r) => r.tag === "R")!.address)
    expect(rows.find((r) => r.tag === "T")!.post_id).toBe(other.body.postId)
    // Still charged once each.
    expect(aliceBefore - (await balance(alice.address))).toBe(PRICE)
    expect(bobBefore - (await balance(bob.address))).toBe(PRICE)
    // Asking for the takedown again answers the stamp made, makes none.
    const again = await call("POST", `/api/social/posts/${other.body.postId}/takedown`, aliceSession)
    expect(again.status).toBe(200)
    expect(again.body.txid).toBe(rows.find((r) => r.tag === "T")!.txid)
    expect((await db.query("SELECT 1 FROM social_stamps WHERE tag = 'T'")).length).toBe(1)
  }, 120_000)

  it("a member-signed publish whose broadcast fails is recorded, answered pending, and sent by the entity when the ledger is back", async () => {
    const r = await call("POST", "/api/social/posts", memberSession, { body: "signed in my wallet" })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    expect(r.body).toMatchObject({ stamping: "awaiting_signature", state: "awaiting_signature", txHash: null })
    const psbts = (r.body.stamps as Array<{ psbt: string; derivationPath: string }>).map((s) =>
      Psbt.fromBase64(s.psbt, { network }).signAllInputs(bip32.fromSeed(seed, network).derivePath(s.derivationPath)).finalizeAllInputs().toBase64())

    await proxy.down()
    const signed = await call("POST", `/api/social/posts/${r.body.postId}/signatures`, memberSession, { psbts })
    expect(signed.status, JSON.stringify(signed.body)).toBe(200)
    expect(signed.body).toMatchObject({ state: "hosted", stamping: "pending" })
    const txids = (signed.body.stamps as Array<{ txid: string }>).map((s) => s.txid)
    // C (the body of a post without media), CHV1P, P.
    expect(txids).toHaveLength(3)
    // Recorded with the member's bytes, not on the ledger yet.
    const recorded = await db.query<{ txid: string }>("SELECT txid FROM social_stamps WHERE post_id = $1 ORDER BY seq", [r.body.postId])
    expect(recorded.map((x) => x.txid)).toEqual(txids)
    await waitFor("a failed retry", 20_000, async () =>
      ((await db.query<{ attempts: number }>("SELECT attempts FROM social_stamping_pending WHERE post_id = $1", [r.body.postId]))[0]?.attempts ?? 0) >= 1 ? true : undefined)

    await proxy.up()
    await waitFor("the member's stamps on the ledger", 30_000, async () =>
      (await db.query("SELECT 1 FROM social_stamping_pending WHERE post_id = $1", [r.body.postId])).length === 0 ? true : undefined, 200)
    for (const txid of txids) expect(typeof (await litecoind.rpc<string>("getrawtransaction", txid))).toBe("string")
    await run(ledger().mine(1, randomLedgerKey().address))
    const chain = await stampsOnChain()
    const [row] = await db.query<{ address: string }>("SELECT address FROM social_posts WHERE id = $1", [r.body.postId])
    for (const s of signed.body.stamps as Array<{ tag: string; cid: string; txid: string }>) {
      expect(chain.get(`${row!.address} ${s.tag} ${s.cid}`)).toEqual([s.txid])
    }
    const lookup = await json(await fetch(`${node.socialUrl}/api/public/post/${r.body.postId}`))
    expect(lookup.body.proof).toMatchObject({ stamping: "done", txHash: signed.body.txHash })
  }, 120_000)
})
