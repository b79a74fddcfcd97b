// Member-signed stamps through a real node on a real database and the ledger devnet: an account
// linked by xpub only (the wallet-link flow over HTTP; the service never sees a private key)
// publishes, gets its stamps as PSBTs, signs them here as a wallet would with its own BIP-32 key,
// and sends them back; the stamps are on the ledger from the post's derived address with the right
// OP_RETURNs, the lookup shows the proof, the timeline rebuilt from the chain finds every stamp.
// Tampered signatures are refused with nothing sent; a moderator's D comes from the service's own
// moderation address; an action never signed lapses at the end of its window, refunded.
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BIP32Factory } from "bip32"
import { Psbt, Transaction, payments, script as bscript } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import { Effect, Either, Layer } from "effect"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { unwrap } from "../../harness/either.ts"
import { Change, Post } from "../../schemas/social/post.ts"
import { extendedKeysAt } from "../../src/chain/keys.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { rawCid } from "../../src/crypto/cid.ts"
import { configLayer } from "../../src/config.ts"
import { systemWallet } from "../../src/platform/ledger/SystemWallet.ts"
import { issueSocialLinkToken } from "../../src/social/identity/issueLinkToken.ts"
import { decodeStamp } from "../../src/social/posts/opReturn.ts"
import { moderationWalletName } from "../../src/social/posts/moderationStamp.ts"
import { cli, cliJson, cliRefused } from "../support/cli.ts"
import { makeWallet } from "../support/linkWallet.ts"
import { cliEnvOf, startNode, type RunningNode } from "../support/node.ts"
import { pgClientLayer } from "../support/pg.ts"
import { createSession, createSocialAccount } from "../support/services.ts"

const bip32 = BIP32Factory(ecc)
const ECPair = ECPairFactory(ecc)
const network = ledgerParams.network
const price = 25_000n
const windowMs = 10_000

let db: TestDatabase
let node: RunningNode
let session: string
let identity: string
let firstPostingAddress: string
let assetId: string
const seed = randomBytes(32)

const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)
const url = (path: string) => `${node.socialUrl}${path}`
const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any })
const send = (method: string, path: string, body?: unknown) =>
  fetch(url(path), {
    method, headers: { authorization: `Bearer ${session}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }).then(json)
const balance = async () =>
  BigInt((await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [identity]))[0]!.b)
const getTx = (txid: string) => node.run(Effect.either(Effect.flatMap(UtxoLedger, (l) => l.getTx(txid))))

/** What a wallet holding the seed does: the key at the path the service names, signing the PSBT. */
const signWithPath = (s: { psbt: string; derivationPath: string }) => {
  const psbt = Psbt.fromBase64(s.psbt, { network })
  psbt.signAllInputs(bip32.fromSeed(seed, network).derivePath(s.derivationPath))
  return psbt.finalizeAllInputs()
}
/** What an HD signer holding only the account key does (Electrum's convention): bip32Derivation's fingerprint and path below it. */
const signWithAccountKey = (s: { psbt: string }) => {
  const account = bip32.fromSeed(seed, network).derivePath("m/44'/696969'/1101'")
  const root = bip32.fromPrivateKey(account.privateKey!, account.chainCode, network)
  const psbt = Psbt.fromBase64(s.psbt, { network })
  psbt.signAllInputsHD(root)
  return psbt.finalizeAllInputs()
}

const media = Buffer.from("a member's own photo, not really a png")
const mediaCid = rawCid(media)

beforeAll(async () => {
  db = await createTestDatabase("socialmember")
  node = await startNode(db.url, {
    SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "10000000",
    SHARDLINE_MESSAGE_POLL_MS: "100",
    SHARDLINE_DEVNET_BLOCK_MS: "0",
    SHARDLINE_SOCIAL_POST_PRICE: price.toString(),
    SHARDLINE_SOCIAL_SIGNATURE_WINDOW_MS: String(windowMs)
  })
  // The account as sign-in knows it (an identity address, no seed), then its xpub linked by the wallet.
  const wallet = makeWallet(seed)
  identity = wallet.addresses.p2pkh
  assetId = randomBytes(3).toString("hex").toUpperCase()
  await db.query("INSERT INTO social_accounts (address, asset_id, balance_base) VALUES ($1, $2, 1000000)", [identity, assetId])
  const issued = await inNode(issueSocialLinkToken(identity))
  const manifest = (await json(await fetch(issued.url, { headers: { accept: "application/json" } }))).body
  const linked = await json(await fetch(url("/api/public/v1/wallet-link"), {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({
      version: 1, type: "wl-link-xpubs", identity_address: identity, xpub: unwrap(extendedKeysAt(seed, "m/44'/696969'/1101'")).xpub,
      xpub_path: "m/44'/696969'/1101'", signature: wallet.sign(manifest.message), token: issued.token
    })
  }))
  expect(linked.status, JSON.stringify(linked.body)).toBe(200)
  firstPostingAddress = linked.body.first_posting_address
  const [row] = await db.query<{ seed_enc: string | null; xpub: string }>("SELECT seed_enc, xpub FROM social_accounts WHERE address = $1", [identity])
  expect(row!.seed_enc).toBeNull()
  session = (await createSession(db.url, identity)).token
  const up = await fetch(url("/api/social/upload"), { method: "POST", headers: { authorization: `Bearer ${session}`, "content-type": "image/png" }, body: media })
  expect(up.status).toBe(201)
}, 60_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

let post: any
let signed: any

describe("publishing from the member's own wallet", () => {
  it("answers 202 with one PSBT per stamp, each spending its own sponsor coin; charged; nothing served yet", async () => {
    const before = await balance()
    const r = await send("POST", "/api/social/posts", { body: "signed by me", tags: ["own"], media: [mediaCid] })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    post = r.body
    expect(post).toMatchObject({ state: "awaiting_signature", action: "publish", signaturesUrl: `/api/social/posts/${post.postId}/signatures` })
    expect(post.stamps.map((s: any) => [s.tag, s.cid])).toEqual([["C", mediaCid], ["CHV1P", post.metadataCid], ["P", post.metadataCid]])
    expect(before - (await balance())).toBe(price)
    const [row] = await db.query<{ address: string; derivation_path: string; post_index: number }>("SELECT address, derivation_path, post_index FROM social_posts WHERE id = $1", [post.postId])
    // The address is the xpub's …/{i}/0/0, the same the service would derive from a seed.
    const derived = bip32.fromSeed(seed, network).derivePath(row!.derivation_path)
    expect(payments.p2pkh({ pubkey: derived.publicKey, network }).address).toBe(row!.address)
    expect(row!.derivation_path).toBe(`m/44'/696969'/1101'/${row!.post_index}/0/0`)
    expect(post.shortId).toBe(row!.address.slice(-6))
    // The link told the wallet where its first post would be stamped from.
    expect(row!.post_index).toBe(0)
    expect(firstPostingAddress).toBe(row!.address)
    const account = bip32.fromSeed(seed, network).derivePath("m/44'/696969'/1101'")
    const outpoints = new Set<string>()
    const fundings = new Set<string>()
    for (const [n, s] of post.stamps.entries()) {
      expect(s.address).toBe(row!.address)
      expect(s.derivationPath).toBe(row!.derivation_path)
      expect(Buffer.byteLength(s.opReturn)).toBeLessThanOrEqual(80)
      expect(Either.getOrThrow(decodeStamp(Buffer.from(s.opReturn))).seq).toBe(n)
      const psbt = Psbt.fromBase64(s.psbt, { network })
      expect(psbt.inputCount).toBe(1)
      const input = psbt.data.inputs[0]!
      expect(input.nonWitnessUtxo).toBeDefined()
      expect(input.bip32Derivation).toHaveLength(1)
      expect(Buffer.from(input.bip32Derivation![0]!.masterFingerprint)).toEqual(Buffer.from(account.fingerprint))
      expect(input.bip32Derivation![0]!.path).toBe(`m/${row!.post_index}/0/0`)
      expect(Buffer.from(input.bip32Derivation![0]!.pubkey)).toEqual(Buffer.from(derived.publicKey))
      const tx = psbt.data.globalMap.unsignedTx as unknown as { toBuffer(): Uint8Array }
      const unsigned = Transaction.fromBuffer(Buffer.from(tx.toBuffer()))
      const prevTxid = Buffer.from(unsigned.ins[0]!.hash).reverse().toString("hex")
      fundings.add(prevTxid)
      outpoints.add(`${prevTxid}:${unsigned.ins[0]!.index}`)
      expect(Buffer.from(payments.embed({ output: unsigned.outs[0]!.script }).data![0]!).toString()).toBe(s.opReturn)
      expect(payments.p2pkh({ output: unsigned.outs[1]!.script, network }).address).toBe(row!.address)
    }
    // One funding transaction, one coin per stamp: no PSBT depends on another's signature.
    expect(fundings.size).toBe(1)
    expect(outpoints.size).toBe(3)
    expect((await getTx([...fundings][0]!))._tag).toBe("Right")
    const again = await send("GET", `/api/social/posts/${post.shortId}/unsigned`)
    expect(again.status).toBe(200)
    expect(again.body.stamps.map((s: any) => s.psbt)).toEqual(post.stamps.map((s: any) => s.psbt))
    expect((await fetch(url(`/api/public/post/${post.postId}`))).status).toBe(404)
  })

  it("refuses tampered or incomplete signatures with 400 and sends nothing", async () => {
    const good = post.stamps.map((s: any) => signWithPath(s))
    // A changed output (more to the fee), properly signed by the right key.
    const first = Psbt.fromBase64(post.stamps[0].psbt, { network })
    const changed = new Psbt({ network })
    changed.setVersion(2)
    changed.addInput({ hash: first.txInputs[0]!.hash, index: first.txInputs[0]!.index, nonWitnessUtxo: first.data.inputs[0]!.nonWitnessUtxo! })
    changed.addOutput({ script: first.txOutputs[0]!.script, value: 0n })
    changed.addOutput({ script: first.txOutputs[1]!.script, value: first.txOutputs[1]!.value - 500n })
    changed.signAllInputs(bip32.fromSeed(seed, network).derivePath(post.stamps[0].derivationPath)).finalizeAllInputs()
    const tamperedOutput = [changed.toBase64(), ...good.slice(1).map((p: Psbt) => p.toBase64())]
    // The exact transaction, signed by another key.
    const unsigned = Transaction.fromBuffer(Buffer.from((first.data.globalMap.unsignedTx as unknown as { toBuffer(): Uint8Array }).toBuffer()))
    const stranger = ECPair.makeRandom({ network })
    const prevScript = payments.p2pkh({ address: post.stamps[0].address, network }).output!
    const sig = bscript.signature.encode(stranger.sign(unsigned.hashForSignature(0, prevScript, Transaction.SIGHASH_ALL)), Transaction.SIGHASH_ALL)
    unsigned.setInputScript(0, bscript.compile([sig, stranger.publicKey]))
    const wrongKey = [unsigned.toHex(), ...good.slice(1).map((p: Psbt) => p.extractTransaction().toHex())]
    for (const [body, needle] of [
      [{ psbts: tamperedOutput }, "output 1 differs"],
      [{ transactions: wrongKey }, "not the key of"],
      [{ psbts: good.slice(1).map((p: Psbt) => p.toBase64()) }, "3 stamps to sign, 2 were sent"],
      [{ psbts: ["bm90IGEgcHNidA=="] }, "not a signed PSBT"],
      [{ psbts: [] }, ""]
    ] as const) {
      const r = await send("POST", `/api/social/posts/${post.postId}/signatures`, body)
      expect(r.status, JSON.stringify(r.body)).toBe(400)
      expect(r.body.error.message).toContain(needle)
    }
    expect((await getTx(changed.extractTransaction().getId()))._tag).toBe("Left")
    expect((await getTx(unsigned.getId()))._tag).toBe("Left")
    for (const p of good) expect((await getTx(p.extractTransaction().getId()))._tag).toBe("Left")
    expect(await db.query("SELECT 1 FROM social_stamps WHERE post_id = $1", [post.postId])).toEqual([])
    expect((await db.query<{ state: string }>("SELECT state FROM social_posts WHERE id = $1", [post.postId]))[0]!.state).toBe("awaiting_signature")
  })

  it("takes the signed stamps: recorded, on the ledger from the derived address with the right OP_RETURNs, the post hosted, the lookup with its proof", async () => {
    const psbts = post.stamps.map((s: any) => signWithAccountKey(s).toBase64())
    const r = await send("POST", `/api/social/posts/${post.postId}/signatures`, { psbts: [...psbts].reverse() })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    signed = r.body
    expect(signed).toMatchObject({ postId: post.postId, state: "hosted", action: "publish" })
    expect(signed.stamps.map((s: any) => s.tag)).toEqual(["C", "CHV1P", "P"])
    const [row] = await db.query<{ address: string }>("SELECT address FROM social_posts WHERE id = $1", [post.postId])
    for (const s of signed.stamps) {
      const found = await getTx(s.txid)
      expect(found._tag).toBe("Right")
      const tx = Transaction.fromHex((found as any).right.hex)
      const [, pubkey] = bscript.decompile(tx.ins[0]!.script)! as [Uint8Array, Uint8Array]
      expect(payments.p2pkh({ pubkey, network }).address).toBe(row!.address)
      expect(Buffer.from(payments.embed({ output: tx.outs[0]!.script }).data![0]!).toString()).toBe(s.opReturn)
      expect(s.opReturn.startsWith(`${s.tag}|${s.cid}|${assetId}.`)).toBe(true)
    }
    const recorded = await db.query<{ txid: string; tag: string }>("SELECT txid, tag FROM social_stamps WHERE post_id = $1 ORDER BY seq", [post.postId])
    expect(recorded.map((s) => [s.tag, s.txid])).toEqual(signed.stamps.map((s: any) => [s.tag, s.txid]))
    const lookup = await json(await fetch(url(`/api/public/post/${post.shortId}`)))
    expect(lookup.status).toBe(200)
    expect(lookup.body.post.state).toBe("hosted")
    expect(lookup.body.proof).toEqual({
      metadataCid: post.metadataCid, ownerAddress: row!.address, derivationPath: post.stamps[0].derivationPath,
      txHash: signed.txHash, opReturn: signed.stamps[1].opReturn, stamping: "done"
    })
    expect(signed.txHash).toBe(signed.stamps[1].txid)
    expect((await fetch(url(`/api/stream/${mediaCid}`))).status).toBe(200)
    // The same signatures again (a lost answer): 200, the recorded bytes sent again, nothing new.
    const retry = await send("POST", `/api/social/posts/${post.postId}/signatures`, { psbts })
    expect(retry.status).toBe(200)
    expect(retry.body.stamps).toEqual(signed.stamps)
    expect((await send("GET", `/api/social/posts/${post.postId}/unsigned`)).status).toBe(404)
  })

  it("metadata (M), renewal (R) and takedown (T) wait for the member's signature and take effect when signed", async () => {
    const m = await send("POST", `/api/social/posts/${post.postId}/metadata`, { tags: ["edited"] })
    expect(m.status, JSON.stringify(m.body)).toBe(202)
    expect(m.body.stamps.map((s: any) => s.tag)).toEqual(["M"])
    // One action at a time: a takedown now waits its turn.
    expect((await send("POST", `/api/social/posts/${post.postId}/takedown`)).body.error.code).toBe("signature_pending")
    expect((await json(await fetch(url(`/api/public/post/${post.postId}`)))).body.post.tags).toEqual(["own"])
    const mSigned = await send("POST", `/api/social/posts/${post.postId}/signatures`, { transactions: [signWithPath(m.body.stamps[0]).extractTransaction().toHex()] })
    expect(mSigned.status, JSON.stringify(mSigned.body)).toBe(200)
    expect(mSigned.body.stamps[0].opReturn).toBe(`M|${m.body.metadataCid}|${assetId}.3`)
    await expect.poll(async () => (await json(await fetch(url(`/api/public/post/${post.postId}`)))).body.post.tags, { timeout: 5_000 }).toEqual(["edited"])
    // A renewal is charged when asked, and extends the period once signed.
    const paidBefore = BigInt((await db.query<{ p: string }>("SELECT paid_until_ms::text AS p FROM social_posts WHERE id = $1", [post.postId]))[0]!.p)
    const balanceBefore = await balance()
    const r = await send("POST", `/api/social/posts/${post.postId}/renew`)
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    expect(balanceBefore - (await balance())).toBe(price)
    const rSigned = await send("POST", `/api/social/posts/${post.postId}/signatures`, { psbts: [signWithAccountKey(r.body.stamps[0]).toBase64()] })
    expect(rSigned.status).toBe(200)
    expect(rSigned.body.stamps[0].opReturn).toBe(`R|${post.metadataCid}|${assetId}.4`)
    const paidAfter = BigInt((await db.query<{ p: string }>("SELECT paid_until_ms::text AS p FROM social_posts WHERE id = $1", [post.postId]))[0]!.p)
    expect(paidAfter).toBeGreaterThan(paidBefore)
    const t = await send("POST", `/api/social/posts/${post.postId}/takedown`)
    expect(t.status).toBe(202)
    expect((await db.query<{ state: string }>("SELECT state FROM social_posts WHERE id = $1", [post.postId]))[0]!.state).toBe("hosted")
    const tSigned = await send("POST", `/api/social/posts/${post.postId}/signatures`, { psbts: [signWithPath(t.body.stamps[0]).toBase64()] })
    expect(tSigned.status).toBe(200)
    expect(tSigned.body).toMatchObject({ state: "taken_down", action: "takedown" })
    expect(tSigned.body.stamps[0].opReturn).toBe(`T|${post.metadataCid}|${assetId}.5`)
    expect((await getTx(tSigned.body.stamps[0].txid))._tag).toBe("Right")
    await expect.poll(async () => (await fetch(url(`/api/stream/${mediaCid}`))).status, { timeout: 5_000 }).toBe(410)
  })

  it("rebuilds the timeline from the chain alone: every member-signed stamp, one unspent coin each", async () => {
    await node.run(Effect.flatMap(UtxoLedger, (l) => l.mine(1, identity)))
    const r = await json(await fetch(url(`/api/public/timeline/${identity}`)))
    expect(r.status).toBe(200)
    const mine = r.body.events.filter((e: any) => e.assetId === assetId)
    expect(mine.map((e: any) => e.tag)).toEqual(["C", "CHV1P", "P", "M", "R", "T"])
    expect(mine.map((e: any) => e.seq)).toEqual([0, 1, 2, 3, 4, 5])
    expect(mine[1].txid).toBe(signed.txHash)
    expect(mine.every((e: any) => e.derivationPath === post.stamps[0].derivationPath)).toBe(true)
  })
})

describe("moderation and lapsed signatures", () => {
  it("a moderator's pull (D) of a member-signed post is stamped from the service's moderation address", async () => {
    const p = await send("POST", "/api/social/posts", { body: "to be pulled" })
    expect(p.status).toBe(202)
    const s = await send("POST", `/api/social/posts/${p.body.postId}/signatures`, { psbts: p.body.stamps.map((x: any) => signWithPath(x).toBase64()) })
    expect(s.status).toBe(200)
    // The author's own actions cannot bypass signing through the entity (the CLI's path).
    const viaCli = await node.run(Effect.either(Effect.flatMap(Post.client, (c) => c(p.body.postId).Change(new Change({ postId: p.body.postId, action: "takedown", requestId: crypto.randomUUID() })))))
    expect(viaCli._tag === "Left" && (viaCli.left as any).code).toBe("no_service_key")
    const pulled = await node.run(Effect.flatMap(Post.client, (c) => c(p.body.postId).Change(new Change({ postId: p.body.postId, action: "moderate", reason: "spam", requestId: crypto.randomUUID() }))))
    expect(pulled.state).toBe("moderated")
    const moderation = await inNode(systemWallet(moderationWalletName))
    const [d] = await db.query<{ address: string; op_return: string; txid: string }>("SELECT address, op_return, txid FROM social_stamps WHERE post_id = $1 AND tag = 'D'", [p.body.postId])
    expect(d!.address).toBe(moderation.address)
    expect(d!.op_return).toBe(pulled.opReturn)
    expect(d!.op_return.startsWith(`D|${p.body.metadataCid}|${assetId}.`)).toBe(true)
    const tx = Transaction.fromHex(((await getTx(d!.txid)) as any).right.hex)
    const [, pubkey] = bscript.decompile(tx.ins[0]!.script)! as [Uint8Array, Uint8Array]
    expect(payments.p2pkh({ pubkey, network }).address).toBe(moderation.address)
  })

  it("an action never signed lapses at the end of its window: the post ends unsigned, the charge refunded less the sponsor coins", async () => {
    const before = await balance()
    const p = await send("POST", "/api/social/posts", { body: "never signed" })
    expect(p.status).toBe(202)
    expect(before - (await balance())).toBe(price)
    const [req] = await db.query<{ funded_sats: string }>("SELECT funded_sats::text AS funded_sats FROM social_signature_requests WHERE post_id = $1", [p.body.postId])
    const funded = BigInt(req!.funded_sats)
    // A coin per stamp: C (the body of a post without media), CHV1P, P.
    expect(funded).toBe(3n * (ledgerParams.dustSats + 1_000n))
    await expect.poll(async () => (await db.query<{ state: string }>("SELECT state FROM social_posts WHERE id = $1", [p.body.postId]))[0]!.state,
      { timeout: windowMs + 10_000, interval: 250 }).toBe("unsigned")
    expect(before - (await balance())).toBe(funded)
    expect(await db.query("SELECT amount_base::text AS amount_base FROM social_charges WHERE post_id = $1 AND reason = 'refund'", [p.body.postId]))
      .toEqual([{ amount_base: (price - funded).toString() }])
    const late = await send("POST", `/api/social/posts/${p.body.postId}/signatures`, { psbts: p.body.stamps.map((x: any) => signWithPath(x).toBase64()) })
    expect(late.status).toBe(409)
    expect(await db.query("SELECT 1 FROM social_stamps WHERE post_id = $1", [p.body.postId])).toEqual([])
  }, 30_000)

  it("social post --xprv-file signs the stamps in the CLI process (the key never reaches the node) and publishes", async () => {
    const env = cliEnvOf(db.url, node)
    expect(cliRefused(await cli(["social", "post", "--account", identity, "--body", "no key", "--json"], env))).toContain("--xprv-file")
    const file = join(tmpdir(), `member-xprv-${process.pid}.txt`)
    writeFileSync(file, `${unwrap(extendedKeysAt(seed, "m/44'/696969'/1101'")).xprv}\n`, { mode: 0o600 })
    const out = cliJson<any>(await cli(["social", "post", "--account", identity, "--body", "signed in the CLI", "--xprv-file", file, "--json"], env))
    expect(out).toMatchObject({ state: "hosted", action: "publish" })
    expect(out.stamps.map((s: any) => s.tag)).toEqual(["C", "CHV1P", "P"])
    for (const s of out.stamps) expect((await getTx(s.txid))._tag).toBe("Right")
    expect((await json(await fetch(url(`/api/public/post/${out.shortId}`)))).body.proof.txHash).toBe(out.txHash)
    // Nothing the node stored holds the private key.
    const xprv = unwrap(extendedKeysAt(seed, "m/44'/696969'/1101'")).xprv
    expect(await db.query("SELECT 1 FROM cluster_messages WHERE payload::text LIKE $1", [`%${xprv.slice(4, 40)}%`])).toEqual([])
  }, 60_000)

  it("answers bad input on the member-signed routes with the documented error shape, never 5xx", async () => {
    const other = (await createSession(db.url, (await createSocialAccount(db.url)).address)).token
    const [mine] = await db.query<{ id: string }>("SELECT id::text AS id FROM social_posts WHERE author = $1 LIMIT 1", [identity])
    const at = (path: string, init: RequestInit = {}, token: string | null = session) =>
      fetch(url(path), { ...init, headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), "content-type": "application/json", ...(init.headers ?? {}) } }).then(json)
    const sigs = `/api/social/posts/${mine!.id}/signatures`
    expect(await at(sigs, { method: "POST", body: "{}" }, null)).toMatchObject({ status: 401, body: { error: { code: "invalid_session" } } })
    expect(await at(sigs, { method: "POST", body: "not json" })).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } })
    expect(await at(sigs, { method: "POST", body: JSON.stringify({ psbts: "x" }) })).toMatchObject({ status: 400, body: { error: { code: "invalid_parameter" } } })
    expect(await at(sigs, { method: "POST", body: JSON.stringify({}) })).toMatchObject({ status: 400, body: { error: { code: "invalid_parameter" } } })
    expect(await at(sigs, { method: "POST", body: JSON.stringify({ transactions: ["00"] }) })).toMatchObject({ status: 400 })
    expect(await at(sigs, { method: "POST", body: JSON.stringify({ psbts: ["AAAA"] }) }, other)).toMatchObject({ status: 403, body: { error: { code: "not_author" } } })
    expect(await at(`/api/social/posts/${mine!.id}/unsigned`, {}, other)).toMatchObject({ status: 403, body: { error: { code: "not_author" } } })
    expect(await at("/api/social/posts/00000000-0000-0000-0000-000000000000/signatures", { method: "POST", body: JSON.stringify({ psbts: ["AAAA"] }) })).toMatchObject({ status: 404 })
    expect(await at("/api/social/posts/%3Cscript%3E/unsigned")).toMatchObject({ status: 404, body: { error: { code: "not_found" } } })
    // A well-formed but unsigned PSBT for a post with nothing waiting: refused, never 5xx.
    const nothing = await at(sigs, { method: "POST", body: JSON.stringify({ psbts: [post.stamps[0].psbt] }) })
    expect(nothing.status).toBe(400)
  })

  it("lists the member-signed routes in the OpenAPI document", async () => {
    const doc = (await json(await fetch(url("/openapi.json")))).body
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/social/posts/{id}/unsigned", "/api/social/posts/{id}/signatures"]))
    expect(Object.keys(doc.paths["/api/social/posts"].post.responses)).toEqual(expect.arrayContaining(["201", "202"]))
  })
})

describe("comments by an xpub-only commenter", () => {
  it("answers 202 with X and XM as PSBTs from the commenter's own comment address; only the commenter's signatures land them, once; charged once", async () => {
    const author = await createSocialAccount(db.url, "commented")
    const authorSession = (await createSession(db.url, author.address)).token
    const target = await json(await fetch(url("/api/social/posts"), {
      method: "POST", headers: { authorization: `Bearer ${authorSession}`, "content-type": "application/json" }, body: JSON.stringify({ body: "comment on me" })
    }))
    expect(target.status, JSON.stringify(target.body)).toBe(201)
    const before = await balance()
    const [{ next_post_index: index }] = await db.query<{ next_post_index: number }>("SELECT next_post_index FROM social_accounts WHERE address = $1", [identity]) as any
    const c = await send("POST", `/api/social/posts/${target.body.postId}/comments`, { body: "signed in my own wallet" })
    expect(c.status, JSON.stringify(c.body)).toBe(202)
    expect(c.body).toMatchObject({ action: "comment", signaturesUrl: `/api/social/posts/${target.body.postId}/comments/${c.body.requestId}/signatures` })
    // X carries the comment body (the spec's reading), XM the comment manifest, from one address.
    expect(c.body.stamps.map((s: any) => [s.tag, s.cid])).toEqual([["X", rawCid(Buffer.from("signed in my own wallet"))], ["XM", expect.any(String)]])
    const [x, xm] = c.body.stamps
    expect(xm.address).toBe(x.address)
    // The commenter's key at its next index: the comment's own address, not the post's, not the author's.
    expect(x.derivationPath).toBe(`m/44'/696969'/1101'/${index}/0/0`)
    expect(payments.p2pkh({ pubkey: bip32.fromSeed(seed, network).derivePath(x.derivationPath).publicKey, network }).address).toBe(x.address)
    expect(before - (await balance())).toBe(price)
    // Not a comment until signed; the post's author cannot sign it, nor does the author's route see it.
    expect((await db.query("SELECT 1 FROM social_comments WHERE id = $1", [c.body.requestId])).length).toBe(0)
    // The waiting X can be read again by the commenter (not by anyone else).
    const unsignedUrl = `/api/social/posts/${target.body.postId}/comments/${c.body.requestId}/unsigned`
    const reread = await send("GET", unsignedUrl)
    expect(reread.status, JSON.stringify(reread.body)).toBe(200)
    expect(reread.body).toMatchObject({ action: "comment", requestId: c.body.requestId, stamps: [{ tag: "X", psbt: x.psbt, address: x.address }, { tag: "XM", psbt: xm.psbt }] })
    expect((await fetch(url(unsignedUrl), { headers: { authorization: `Bearer ${authorSession}` } })).status).toBe(403)
    const signedHex = [signWithPath(x).extractTransaction().toHex(), signWithPath(xm).extractTransaction().toHex()]
    const byAuthor = await json(await fetch(url(c.body.signaturesUrl), {
      method: "POST", headers: { authorization: `Bearer ${authorSession}`, "content-type": "application/json" }, body: JSON.stringify({ transactions: signedHex })
    }))
    expect(byAuthor).toMatchObject({ status: 403, body: { error: { code: "not_author" } } })
    // The PSBT unsigned is refused, nothing sent.
    expect((await send("POST", c.body.signaturesUrl, { psbts: [x.psbt, xm.psbt] })).status).toBe(400)
    const ok = await send("POST", c.body.signaturesUrl, { transactions: signedHex })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body).toMatchObject({ action: "comment", stamping: "done" })
    expect((await send("GET", unsignedUrl)).status).toBe(404)
    const txid = ok.body.stamps[0].txid
    expect((await getTx(txid))._tag).toBe("Right")
    const decoded = Either.getOrThrow(decodeStamp(Buffer.from(ok.body.stamps[0].opReturn)))
    expect(decoded).toMatchObject({ tag: "X", cid: x.cid, assetId, seq: 0 })
    const linked = Either.getOrThrow(decodeStamp(Buffer.from(ok.body.stamps[1].opReturn)))
    expect(linked).toMatchObject({ tag: "XM", cid: xm.cid, assetId, seq: 1 })
    expect(await (await fetch(url(`/api/stream/${decoded.cid}`))).text()).toBe("signed in my own wallet")
    const [comment] = await db.query<{ txid: string; address: string; body_cid: string; manifest_cid: string; author: string }>(
      "SELECT txid, address, body_cid, manifest_cid, author FROM social_comments WHERE id = $1", [c.body.requestId])
    expect(comment).toEqual({ txid, address: x.address, body_cid: decoded.cid, manifest_cid: linked.cid, author: identity })
    // The manifest names the commented post's metadata CID.
    const manifest = JSON.parse(await (await fetch(url(`/api/stream/${linked.cid}`))).text())
    expect(manifest).toMatchObject({ type: "comment", post: target.body.metadataCid, postId: target.body.postId, author: identity, body: decoded.cid })
    // The same signatures again: the recorded bytes, nothing new, not charged again.
    const again = await send("POST", c.body.signaturesUrl, { transactions: signedHex })
    expect(again.status).toBe(200)
    expect(again.body.stamps[0].txid).toBe(txid)
    expect((await db.query("SELECT 1 FROM social_stamps WHERE tag = 'X' AND post_id = $1", [target.body.postId])).length).toBe(1)
    expect(before - (await balance())).toBe(price)
  }, 60_000)
})
