// Social content through a real node on a real database: account, upload, post (charged,
// stamped on the ledger devnet), lookup with proof, ranged streaming, pages, embeds, oEmbed,
// verification, the chain-only timeline, takedown, and the Post entity's hosting timers.
import { Transaction, payments } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import { Effect, Either, Option } from "effect"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { devnetFaucet } from "../../src/chain/ledger/devnetFaucet.ts"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { topUpConfirmations } from "../../src/social/accounts/TopUps.ts"
import { signMessage } from "../../src/chain/message.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { rawCid } from "../../src/crypto/cid.ts"
import type { NewAccount } from "../../src/social/accounts/Accounts.ts"
import { chunkBytes } from "../../src/social/content/ContentStore.ts"
import { setLiveStream } from "../../src/social/pages/liveChannels.ts"
import { decodeStamp } from "../../src/social/posts/opReturn.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { pgClientLayer } from "../support/pg.ts"
import { createSession, createSocialAccount } from "../support/services.ts"

const ECPair = ECPairFactory(ecc)
// The first post must still be hosted when the lifecycle tests edit and comment on it, some 12–20 s
// after it is published on a loaded machine; the hosting test waits out one period and the grace.
const hostingMs = 25_000
const graceMs = 5_000
const countdownMs = 3_000

let db: TestDatabase
let node: RunningNode
let alice: NewAccount
let bob: NewAccount
let aliceSession: string
let bobSession: string

beforeAll(async () => {
  db = await createTestDatabase("socialcontent")
  node = await startNode(db.url, {
    SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "10000000",
    SHARDLINE_MESSAGE_POLL_MS: "100",
    SHARDLINE_DEVNET_BLOCK_MS: "0",
    SHARDLINE_SOCIAL_HOSTING_PERIOD_MS: String(hostingMs),
    SHARDLINE_SOCIAL_GRACE_MS: String(graceMs),
    SHARDLINE_SOCIAL_POST_PRICE: "25000",
    SHARDLINE_SOCIAL_CONTENT_BYTES_MAX: String(3 * chunkBytes),
    SHARDLINE_SOCIAL_CONTINUITY_COUNTDOWN_MS: String(countdownMs)
  })
  alice = await createSocialAccount(db.url, "alice")
  bob = await createSocialAccount(db.url)
  aliceSession = (await createSession(db.url, alice.address)).token
  bobSession = (await createSession(db.url, bob.address)).token
}, 60_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const url = (path: string) => `${node.socialUrl}${path}`
/** Runs an effect in the node with a client on its database (what the CLI's commands run with). */
const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, pgClientLayer(db.url))) as Effect.Effect<A, E, never>)
const auth = (token: string) => ({ authorization: `Bearer ${token}` })
const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any })
const upload = (bytes: Uint8Array, type: string, token = aliceSession) =>
  fetch(url("/api/social/upload"), { method: "POST", headers: { ...auth(token), "content-type": type }, body: bytes })
const publish = (body: Record<string, unknown>, token = aliceSession) =>
  fetch(url("/api/social/posts"), { method: "POST", headers: { ...auth(token), "content-type": "application/json" }, body: JSON.stringify(body) })

const media = Buffer.alloc(chunkBytes + 5000)
for (let i = 0; i < media.length; i++) media[i] = (i * 7 + (i >> 9)) & 0xff
const mediaCid = rawCid(media)
const hostile = "<script>alert(1)</script>\u2028</script><img src=x onerror=alert(2)> \"quoted\" & 'single' " + "é".repeat(3000)

let post: { postId: string; shortId: string; metadataCid: string; mediaCids: string[]; txHash: string; opReturn: string }

describe("composer", () => {
  it("needs a session to upload or post", async () => {
    expect((await fetch(url("/api/social/upload"), { method: "POST", body: "x", headers: { "content-type": "text/plain" } })).status).toBe(401)
    expect((await fetch(url("/api/social/posts"), { method: "POST", body: "{}" })).status).toBe(401)
  })

  it("uploads media by streaming into the store: the CID of the bytes, again the same", async () => {
    const first = await json(await upload(media, "video/mp4"))
    expect(first).toEqual({ status: 201, body: { cid: mediaCid, size: media.length, mediaType: "video/mp4" } })
    expect((await json(await upload(media, "video/mp4"))).body.cid).toBe(mediaCid)
  })

  it("refuses a wrong content type (415) and an oversized upload (413), never 5xx", async () => {
    const html = await json(await upload(Buffer.from("<html>"), "text/html"))
    expect(html).toMatchObject({ status: 415, body: { error: { code: "unsupported_media_type" } } })
    const big = await upload(Buffer.alloc(3 * chunkBytes + 1), "video/mp4")
    expect(big.status).toBe(413)
  })

  it("takes HLS segments, playlists and unknown types, typed by their bytes; serves each with its type, unknown ones as a download (issue 23.15)", async () => {
    const ts = Buffer.alloc(188 * 40, 0x11)
    for (let i = 0; i < 40; i++) ts[i * 188] = 0x47
    const styp = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from("stypmsdh\0\0\0\0msdhmsix", "latin1")])
    const playlist = Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4.0,\n${rawCid(ts)}\n#EXT-X-ENDLIST\n`)
    const unknown = Buffer.from("%PDF-1.7 not a known signature \x00\x01", "latin1")
    // What browsers and clients send for these files: the bytes decide, not the declaration.
    const cases: ReadonlyArray<[Buffer, string | undefined, string]> = [
      [ts, "video/vnd.dlna.mpeg-tts", "video/mp2t"], [ts, "text/vnd.trolltech.linguist", "video/mp2t"],
      [styp, undefined, "video/iso.segment"], [playlist, "audio/x-mpegurl", "application/vnd.apple.mpegurl"],
      [unknown, "application/pdf", "application/octet-stream"], [unknown, undefined, "application/octet-stream"]
    ]
    for (const [bytes, declared, type] of cases) {
      const r = await json(await fetch(url("/api/social/upload"), { method: "POST", headers: { ...auth(aliceSession), ...(declared === undefined ? {} : { "content-type": declared }) }, body: bytes }))
      expect(r, `${declared} → ${type}`).toEqual({ status: 201, body: { cid: rawCid(bytes), size: bytes.length, mediaType: type } })
      const served = await fetch(url(`/api/stream/${rawCid(bytes)}`))
      expect(served.headers.get("content-type")).toBe(type)
      expect(served.headers.get("x-content-type-options")).toBe("nosniff")
      expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true)
      const attachment = type === "application/octet-stream" ? `attachment; filename="${rawCid(bytes)}"` : null
      expect(served.headers.get("content-disposition")).toBe(attachment)
      // The edge's hot range (second read of a range) carries the same headers.
      for (let i = 0; i < 2; i++) {
        const part = await fetch(url(`/api/stream/${rawCid(bytes)}`), { headers: { range: "bytes=0-3" } })
        expect(part.status).toBe(206)
        expect([part.headers.get("content-type"), part.headers.get("content-disposition")]).toEqual([type, attachment])
      }
    }
    // Active content is refused whatever it is declared as (the XSS guard).
    for (const [body, declared] of [["<svg onload=alert(1)>", "image/png"], ["<!doctype html><script>alert(1)</script>", undefined], ["plain", "image/svg+xml"]] as const) {
      const r = await json(await fetch(url("/api/social/upload"), { method: "POST", headers: { ...auth(aliceSession), ...(declared === undefined ? {} : { "content-type": declared }) }, body }))
      expect(r, body).toMatchObject({ status: 415, body: { error: { code: "unsupported_media_type" } } })
    }
  })

  it("publishes a post: charged, manifest by CID, short id from its own address, stamped CHV1P on the ledger", async () => {
    const before = await db.query<{ balance_base: string }>("SELECT balance_base::text AS balance_base FROM social_accounts WHERE address = $1", [alice.address])
    const r = await json(await publish({ body: hostile, kind: "story", tags: ["news", "x_y"], media: [mediaCid] }))
    expect(r.status).toBe(201)
    post = r.body
    expect(post.postId).toMatch(/^[0-9a-f-]{36}$/)
    expect(post.shortId).toMatch(/^[1-9A-HJ-NP-Za-km-z]{6}$/)
    expect(post.mediaCids).toEqual([mediaCid])
    expect(post.opReturn).toBe(`CHV1P|${post.metadataCid}|${alice.assetId}.${post.opReturn.split(".").at(-1)}`)
    expect(Buffer.byteLength(post.opReturn)).toBeLessThanOrEqual(80)
    const after = await db.query<{ balance_base: string }>("SELECT balance_base::text AS balance_base FROM social_accounts WHERE address = $1", [alice.address])
    expect(BigInt(before[0]!.balance_base) - BigInt(after[0]!.balance_base)).toBe(25000n)
    // The transaction is on the ledger, from the post's own address, and its OP_RETURN says it.
    const [row] = await db.query<{ address: string }>("SELECT address FROM social_posts WHERE id = $1", [post.postId])
    expect(post.shortId).toBe(row!.address.slice(-6))
    const tx = await node.run(Effect.flatMap(UtxoLedger, (l) => l.getTx(post.txHash)))
    const decoded = Transaction.fromHex(tx.hex)
    const data = payments.embed({ output: decoded.outs[0]!.script }).data![0]!
    expect(Buffer.from(data).toString()).toBe(post.opReturn)
    expect(decoded.outs[1] && payments.p2pkh({ output: decoded.outs[1].script, network: ledgerParams.network }).address).toBe(row!.address)
    // The manifest is stored under its CID and names the post.
    const manifest = await json(await fetch(url(`/api/stream/${post.metadataCid}`)))
    expect(manifest.body).toMatchObject({ version: 1, kind: "story", body: hostile, tags: ["news", "x_y"], media: [mediaCid], author: alice.address, address: row!.address })
  })

  it("stamps C for the media, CHV1P for the manifest and P for the period, each ≤ 80 bytes", async () => {
    const stamps = await db.query<{ tag: string; cid: string; op_return: string }>("SELECT tag, cid, op_return FROM social_stamps WHERE post_id = $1 ORDER BY seq", [post.postId])
    expect(stamps.map((s) => [s.tag, s.cid])).toEqual([["C", mediaCid], ["CHV1P", post.metadataCid], ["P", post.metadataCid]])
    for (const s of stamps) {
      expect(Buffer.byteLength(s.op_return)).toBeLessThanOrEqual(80)
      expect(Either.getOrThrow(decodeStamp(Buffer.from(s.op_return))).assetId).toBe(alice.assetId)
    }
  })

  it("refuses a post the balance cannot pay (402) and unknown media (404)", async () => {
    await db.query("UPDATE social_accounts SET balance_base = 100 WHERE address = $1", [bob.address])
    expect(await json(await publish({ body: "hi" }, bobSession))).toMatchObject({ status: 402, body: { error: { code: "insufficient_balance" } } })
    await db.query("UPDATE social_accounts SET balance_base = 100000000 WHERE address = $1", [bob.address])
    const unknown = rawCid(Buffer.from("never uploaded"))
    expect((await publish({ body: "hi", media: [unknown] }, bobSession)).status).toBe(404)
    expect((await publish({ body: "hi", media: ["not-a-cid"] }, bobSession)).status).toBe(400)
  })
})

describe("reading", () => {
  it("looks a post up by short and long id, with its proof and links", async () => {
    for (const id of [post.shortId, post.postId]) {
      const r = await json(await fetch(url(`/api/public/post/${id}`)))
      expect(r.status).toBe(200)
      expect(r.body.post).toMatchObject({ shortId: post.shortId, kind: "story", body: hostile, tags: ["news", "x_y"] })
      expect(r.body.author).toEqual({ wallet: alice.address, handle: "alice", assetId: alice.assetId, previousAddresses: [] })
      expect(r.body.proof).toMatchObject({ metadataCid: post.metadataCid, txHash: post.txHash, opReturn: post.opReturn, stamping: "done" })
      expect(r.body.proof.derivationPath).toMatch(/^m\/44'\/696969'\/1101'\/\d+\/0\/0$/)
      expect(r.body.links.page).toBe(`${node.socialUrl}/p/${post.shortId}`)
      expect(r.body.links.embed).toBe(`${node.socialUrl}/embed/p/${post.shortId}`)
    }
    expect((await fetch(url("/api/public/post/zzzzzz"))).status).toBe(404)
    expect((await fetch(url("/api/public/post/../../etc"))).status).toBe(404)
  })

  it("streams media with RFC 9110 ranges: 200, 206, suffix, open, multipart, 416, If-Range, HEAD, ETag", async () => {
    const path = url(`/api/stream/${mediaCid}`)
    const whole = await fetch(path)
    expect(whole.status).toBe(200)
    expect(whole.headers.get("accept-ranges")).toBe("bytes")
    expect(whole.headers.get("etag")).toBe(`"${mediaCid}"`)
    expect(whole.headers.get("content-type")).toBe("video/mp4")
    expect(Buffer.from(await whole.arrayBuffer()).equals(media)).toBe(true)
    const probe = await fetch(path, { headers: { range: "bytes=0-1" } })
    expect(probe.status).toBe(206)
    expect(probe.headers.get("content-range")).toBe(`bytes 0-1/${media.length}`)
    expect(Buffer.from(await probe.arrayBuffer()).equals(media.subarray(0, 2))).toBe(true)
    const across = await fetch(path, { headers: { range: `bytes=${chunkBytes - 10}-${chunkBytes + 9}` } })
    expect(Buffer.from(await across.arrayBuffer()).equals(media.subarray(chunkBytes - 10, chunkBytes + 10))).toBe(true)
    const suffix = await fetch(path, { headers: { range: "bytes=-100" } })
    expect(suffix.headers.get("content-range")).toBe(`bytes ${media.length - 100}-${media.length - 1}/${media.length}`)
    expect(Buffer.from(await suffix.arrayBuffer()).equals(media.subarray(-100))).toBe(true)
    const open = await fetch(path, { headers: { range: `bytes=${media.length - 5}-` } })
    expect((await open.arrayBuffer()).byteLength).toBe(5)
    const multi = await fetch(path, { headers: { range: "bytes=0-9,100-109" } })
    expect(multi.status).toBe(206)
    const boundary = multi.headers.get("content-type")!.match(/^multipart\/byteranges; boundary=(.+)$/)![1]!
    const text = Buffer.from(await multi.arrayBuffer()).toString("latin1")
    expect(text).toContain(`--${boundary}\r\nContent-Type: video/mp4\r\nContent-Range: bytes 0-9/${media.length}\r\n\r\n${media.subarray(0, 10).toString("latin1")}`)
    expect(text).toContain(`Content-Range: bytes 100-109/${media.length}\r\n\r\n${media.subarray(100, 110).toString("latin1")}`)
    expect(text.endsWith(`--${boundary}--\r\n`)).toBe(true)
    const past = await fetch(path, { headers: { range: `bytes=${media.length}-` } })
    expect(past.status).toBe(416)
    expect(past.headers.get("content-range")).toBe(`bytes */${media.length}`)
    // A reversed range is invalid and ignored (the whole item); a stale If-Range too.
    expect((await fetch(path, { headers: { range: "bytes=9-0" } })).status).toBe(200)
    expect((await fetch(path, { headers: { range: "bytes=0-1", "if-range": "\"other\"" } })).status).toBe(200)
    expect((await fetch(path, { headers: { range: "bytes=0-1", "if-range": `"${mediaCid}"` } })).status).toBe(206)
    expect((await fetch(path, { headers: { "if-none-match": `"${mediaCid}"` } })).status).toBe(304)
    const head = await fetch(path, { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.headers.get("content-length")).toBe(String(media.length))
    expect((await head.arrayBuffer()).byteLength).toBe(0)
    // The second read of a range is answered by the edge from verified chunks in memory: the same
    // status, headers and bytes as the handler's answer.
    const shape = async (r: Response) => ({
      status: r.status,
      headers: [...r.headers.entries()].filter(([k]) => !["date", "ratelimit-remaining", "ratelimit-reset", "keep-alive", "connection"].includes(k)).sort(),
      body: Buffer.from(await r.arrayBuffer()).toString("hex")
    })
    const cold = await shape(await fetch(path, { headers: { range: "bytes=300000-300099" } }))
    const warm = await shape(await fetch(path, { headers: { range: "bytes=300000-300099" } }))
    expect(warm).toEqual(cold)
    expect(cold.body).toBe(media.subarray(300000, 300100).toString("hex"))
    expect((await fetch(url("/api/stream/not-a-cid"))).status).toBe(400)
    expect((await fetch(url(`/api/stream/${rawCid(Buffer.from("nope"))}`))).status).toBe(404)
  })

  it("serves the post page with canonical, Open Graph, Twitter, escaped JSON-LD and oEmbed discovery", async () => {
    const r = await fetch(url(`/p/${post.shortId}`))
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toMatch(/^text\/html/)
    const html = await r.text()
    expect(html).toContain(`<link rel="canonical" href="${node.socialUrl}/p/${post.shortId}">`)
    expect(html).toContain(`<meta property="og:title"`)
    expect(html).toContain(`<meta name="twitter:card"`)
    expect(html).toContain(`type="application/json+oembed"`)
    expect(html).not.toContain("<script>alert")
    expect(html).not.toContain("<img src=x")
    expect(html).not.toContain("\u2028")
    const ld = html.match(/<script type="application\/ld\+json">(.*?)<\/script>/s)![1]!
    expect(ld).not.toMatch(/<|>|\u2028/)
    const parsed = JSON.parse(ld)
    expect(parsed).toMatchObject({ "@type": "SocialMediaPosting", articleBody: hostile, url: `${node.socialUrl}/p/${post.shortId}` })
    expect(html.match(/<\/script>/g)).toHaveLength(1)
  })

  it("serves embeds frameable anywhere: post card dark by default and light on request, the video player", async () => {
    const dark = await fetch(url(`/embed/p/${post.postId}`))
    expect(dark.status).toBe(200)
    expect(dark.headers.get("x-frame-options")).toBeNull()
    expect(await dark.text()).toContain(`data-theme="dark"`)
    expect(await (await fetch(url(`/embed/p/${post.shortId}?theme=light`))).text()).toContain(`data-theme="light"`)
    const player = await (await fetch(url(`/embed/${mediaCid}?autoplay=1&muted=1&t=12`))).text()
    expect(player).toContain(`/api/stream/${mediaCid}#t=12`)
    expect(player).toMatch(/ autoplay muted>/)
    expect((await fetch(url("/embed/not-a-cid"))).status).toBe(400)
    // Issue 23.16: a live embed always answers a frameable page, "offline" without a channel.
    for (const path of ["/embed/live/nochannel", "/embed/live/by-wallet/TnoSuchWallet"]) {
      const offline = await fetch(url(path))
      expect(offline.status, path).toBe(200)
      expect(offline.headers.get("content-type")).toContain("text/html")
      expect(offline.headers.get("x-frame-options")).toBeNull()
      expect(await offline.text()).toContain(`data-live="offline"`)
    }
    await db.query("INSERT INTO social_live_channels (stream_id, wallet, title) VALUES ('chan1', $1, '<b>Live</b>')", [alice.address])
    const live = await (await fetch(url(`/embed/live/by-wallet/${alice.address}`))).text()
    expect(live).toContain("&lt;b&gt;Live&lt;/b&gt;")
    expect((await fetch(url("/embed/live/chan1"))).status).toBe(200)
  })

  it("a known channel's player is offline until the channel has a stream, then points at a playlist that answers (issue 23.16)", async () => {
    await db.query("INSERT INTO social_live_channels (stream_id, wallet, title) VALUES ('chan2', $1, 'Evening show')", [bob.address])
    // No stream yet: the embed says offline (not a player of a playlist that is not there).
    for (const path of ["/embed/live/chan2", `/embed/live/by-wallet/${bob.address}`]) {
      const offline = await fetch(url(path))
      expect(offline.status, path).toBe(200)
      const page = await offline.text()
      expect(page, path).toContain(`data-live="offline"`)
      expect(page, path).not.toContain("<video")
    }
    expect(await json(await fetch(url("/live/chan2/index.m3u8")))).toMatchObject({ status: 404, body: { error: { code: "not_found" } } })
    expect((await fetch(url("/live/nochannel/index.m3u8"))).status).toBe(404)

    // The ingest: segments and the playlist naming them by /api/stream/{cid} go into the store; the
    // channel's current playlist is set (what `social live stream` does).
    const segment = Buffer.alloc(188 * 3)
    for (let i = 0; i < 3; i++) segment[i * 188] = 0x47
    const seg = await json(await upload(segment, "video/mp2t", bobSession))
    expect(seg.body.mediaType).toBe("video/mp2t")
    const playlist = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:2.0,\n/api/stream/${seg.body.cid}\n`
    const list = await json(await upload(Buffer.from(playlist), "application/vnd.apple.mpegurl", bobSession))
    expect(list.status).toBe(201)
    expect(await inNode(setLiveStream("chan2", seg.body.cid))).toEqual(Option.some("not_a_playlist"))
    expect(await inNode(setLiveStream("chan2", list.body.cid))).toEqual(Option.none())

    // Now a player, whose source answers with the playlist, whose segment answers too.
    const page = await (await fetch(url("/embed/live/chan2"))).text()
    expect(page).not.toContain(`data-live="offline"`)
    const src = /<video src="([^"]+)"/.exec(page)![1]!
    expect(src).toBe(`${node.socialUrl}/live/chan2/index.m3u8`)
    const served = await fetch(src)
    expect(served.status).toBe(200)
    expect(served.headers.get("content-type")).toBe("application/vnd.apple.mpegurl")
    expect(served.headers.get("cache-control")).toBe("no-cache")
    const text = await served.text()
    expect(text).toBe(playlist)
    const segmentUri = text.split("\n").find((l) => l.startsWith("/api/stream/"))!
    const bytes = await fetch(new URL(segmentUri, src))
    expect(bytes.status).toBe(200)
    expect(bytes.headers.get("content-type")).toBe("video/mp2t")
    // Taken offline again: the embed says so, the playlist route is 404.
    expect(await inNode(setLiveStream("chan2", null))).toEqual(Option.none())
    expect(await (await fetch(url(`/embed/live/by-wallet/${bob.address}`))).text()).toContain(`data-live="offline"`)
    expect((await fetch(src)).status).toBe(404)
  })

  it("answers oEmbed 1.0 rich within maxwidth/maxheight; 404 foreign, 501 xml, 400 out of range", async () => {
    const page = `${node.socialUrl}/p/${post.shortId}`
    const r = await json(await fetch(url(`/api/public/oembed?url=${encodeURIComponent(page)}&maxwidth=300&maxheight=200`)))
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ type: "rich", version: "1.0", author_name: "@alice" })
    expect(r.body.width).toBeLessThanOrEqual(300)
    expect(r.body.height).toBeLessThanOrEqual(200)
    expect(r.body.html).toMatch(/^<iframe src="[^"<>]+\/embed\/p\/[^"]+"/)
    expect((await fetch(url(`/api/public/oembed?url=${encodeURIComponent(`https://evil.example/p/${post.shortId}`)}`))).status).toBe(404)
    expect((await fetch(url(`/api/public/oembed?url=${encodeURIComponent(`${node.socialUrl}/p/zzzzzz`)}`))).status).toBe(404)
    expect((await fetch(url(`/api/public/oembed?url=${encodeURIComponent(page)}&format=xml`))).status).toBe(501)
    expect((await fetch(url(`/api/public/oembed?url=${encodeURIComponent(page)}&maxwidth=100`))).status).toBe(400)
    expect((await fetch(url(`/api/public/oembed?url=${encodeURIComponent(page)}&maxheight=2001`))).status).toBe(400)
  })

  it("verifies messages: valid, well-formed wrong → 200 false, malformed → 400", async () => {
    const key = ECPair.makeRandom({ network: ledgerParams.network })
    const address = payments.p2pkh({ pubkey: key.publicKey, network: ledgerParams.network }).address!
    const signature = Either.getOrThrow(signMessage("hello", new Uint8Array(key.privateKey!)))
    const verify = (body: unknown) => fetch(url("/api/public/ledger-verify-message"), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    expect(await json(await verify({ address, signature, message: "hello" }))).toEqual({ status: 200, body: { valid: true } })
    expect(await json(await verify({ address, signature, message: "hellO" }))).toEqual({ status: 200, body: { valid: false } })
    expect(await json(await verify({ address: alice.address, signature, message: "hello" }))).toEqual({ status: 200, body: { valid: false } })
    expect((await verify({ address, signature: "!!", message: "hello" })).status).toBe(400)
    expect((await verify({ address, message: "hello" })).status).toBe(400)
    // An empty or truncated multipart body used to hang the request (platform multipart parser).
    for (const body of ["", "--x\r\n", "garbage"]) {
      const r = await fetch(url("/api/public/ledger-verify-message"), { method: "POST", headers: { "content-type": "multipart/form-data; boundary=x" }, body, signal: AbortSignal.timeout(5_000) })
      expect(r.status).toBe(400)
      const p = await fetch(url("/api/social/posts"), { method: "POST", headers: { ...auth(aliceSession), "content-type": "multipart/form-data; boundary=x" }, body, signal: AbortSignal.timeout(5_000) })
      expect(p.status).toBe(400)
    }
  })

  it("reports health: tip height, chain, hot wallet balance, top-up address", async () => {
    const r = await json(await fetch(url("/api/public/ledger-health")))
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ chain: "ledger", height: expect.any(Number), topUpAddress: expect.stringMatching(/^T/), hotWallet: { address: expect.stringMatching(/^T/) } })
  })

  it("credits a ledger payment to the top-up address to the paying account's balance, once", async () => {
    const dave = await createSocialAccount(db.url)
    const { topUpAddress } = (await json(await fetch(url("/api/public/ledger-health")))).body
    const balance = async () => BigInt((await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [dave.address]))[0]!.b)
    const before = await balance()
    const key = new Uint8Array(ECPair.fromWIF(dave.wif, ledgerParams.network).privateKey!)
    await node.run(Effect.gen(function*() {
      const ledger = yield* UtxoLedger
      const faucet = devnetFaucet(ledger)
      yield* faucet.pay(dave.address, 1_000_000n)
      // A payment from an address that is no account: seen, not credited.
      yield* faucet.pay(topUpAddress, 50_000n)
      yield* ledger.mine(1, faucet.address)
      yield* makeKeyWallet(ledger, key).pay(topUpAddress, 300_000n)
      yield* ledger.mine(topUpConfirmations, faucet.address)
    }))
    const deadline = Date.now() + 15_000
    while ((await balance()) === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    expect((await balance()) - before).toBe(300_000n)
    const rows = await db.query<{ account: string; amount_base: string }>("SELECT account, amount_base::text AS amount_base FROM social_topups")
    expect(rows).toEqual([{ account: dave.address, amount_base: "300000" }])
    // Later rounds look at later blocks only: the credit stays single.
    await node.run(Effect.flatMap(UtxoLedger, (l) => l.mine(2, alice.address)))
    await new Promise((r) => setTimeout(r, 4_500))
    expect((await balance()) - before).toBe(300_000n)
  }, 40_000)

  it("lists every route in the OpenAPI document, both <chain> paths included", async () => {
    const paths = Object.keys((await json(await fetch(url("/openapi.json")))).body.paths)
    for (const p of ["/api/public/ledger-verify-message", "/api/public/ledger-health", "/api/public/post/{id}", "/api/public/oembed", "/api/stream/{cid}", "/api/social/upload", "/api/social/posts", "/p/{id}", "/embed/p/{id}", "/embed/{cid}", "/embed/live/{streamId}", "/embed/live/by-wallet/{wallet}", "/live/{streamId}/index.m3u8", "/api/public/timeline/{address}"]) {
      expect(paths).toContain(p)
    }
  })
})

describe("chain record and lifecycle", () => {
  it("rebuilds the author's timeline from the chain alone", async () => {
    await node.run(Effect.flatMap(UtxoLedger, (l) => l.mine(1, alice.address)))
    const r = await json(await fetch(url(`/api/public/timeline/${alice.address}`)))
    expect(r.status).toBe(200)
    const mine = r.body.events.filter((e: any) => e.assetId === alice.assetId)
    expect(mine.map((e: any) => [e.tag, e.cid])).toEqual([["C", mediaCid], ["CHV1P", post.metadataCid], ["P", post.metadataCid]])
    expect(mine[1].txid).toBe(post.txHash)
    expect(mine.every((e: any) => e.confirmations >= 1)).toBe(true)
  })

  it("updates a post's metadata (M, author only) and takes comments (X, charged to the commenter)", async () => {
    const post2 = (path: string, token: string, body: unknown) =>
      fetch(url(`/api/social/posts/${post.shortId}/${path}`), { method: "POST", headers: { ...auth(token), "content-type": "application/json" }, body: JSON.stringify(body) })
    expect((await json(await post2("metadata", bobSession, { tags: ["x"] }))).status).toBe(403)
    const m = await json(await post2("metadata", aliceSession, { tags: ["edited"] }))
    expect(m.status).toBe(200)
    expect(m.body.opReturn).toMatch(new RegExp(`^M\\|bafkrei[a-z2-7]{52}\\|${alice.assetId}\\.`))
    const newManifest = m.body.opReturn.split("|")[1]
    expect((await json(await fetch(url(`/api/stream/${newManifest}`)))).body).toMatchObject({ tags: ["edited"], previous: post.metadataCid, body: hostile })
    expect((await json(await fetch(url(`/api/public/post/${post.postId}`)))).body.post.tags).toEqual(["edited"])
    const bobBefore = (await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [bob.address]))[0]!.b
    const c = await json(await post2("comments", bobSession, { body: "nice <b>post</b>" }))
    expect(c.status).toBe(201)
    // The commenter's stamps: bob's #asset id, from the comment's own address. X carries the
    // comment body (the spec's reading); XM after it a comment manifest that names the post's
    // metadata CID and the body's CID.
    const bodyCid = rawCid(Buffer.from("nice <b>post</b>"))
    expect(c.body.opReturn).toMatch(new RegExp(`^X\\|${bodyCid}\\|${bob.assetId}\\.`))
    expect(await (await fetch(url(`/api/stream/${bodyCid}`))).text()).toBe("nice <b>post</b>")
    const [xm] = await db.query<{ cid: string; op_return: string }>("SELECT s.cid, s.op_return FROM social_stamps s JOIN social_comments c ON c.address = s.address WHERE c.txid = $1 AND s.tag = 'XM'", [c.body.txid])
    expect(Either.getOrThrow(decodeStamp(Buffer.from(xm!.op_return)))).toMatchObject({ tag: "XM", assetId: bob.assetId, seq: 1 })
    const commentManifest = await json(await fetch(url(`/api/stream/${xm!.cid}`)))
    expect(commentManifest.body).toMatchObject({ version: 1, type: "comment", post: post.metadataCid, postId: post.postId, body: bodyCid, author: bob.address })
    // Sent from the comment's own address, derived from bob's social key (not alice's post address).
    const commentTx = Transaction.fromHex((await node.run(Effect.flatMap(UtxoLedger, (l) => l.getTx(c.body.txid)))).hex)
    expect(Buffer.from(payments.embed({ output: commentTx.outs[0]!.script }).data![0]!).toString()).toBe(c.body.opReturn)
    const [commentRow] = await db.query<{ address: string; derivation_path: string }>("SELECT address, derivation_path FROM social_comments WHERE txid = $1", [c.body.txid])
    expect(payments.p2pkh({ output: commentTx.outs[1]!.script, network: ledgerParams.network }).address).toBe(commentRow!.address)
    expect(commentRow!.derivation_path).toMatch(/^m\/44'\/696969'\/1101'\/\d+\/0\/0$/)
    // (That it derives from bob's xpub: his chain-only timeline finds it, in the continuity test below.)
    const bobAfter = (await db.query<{ b: string }>("SELECT balance_base::text AS b FROM social_accounts WHERE address = $1", [bob.address]))[0]!.b
    expect(BigInt(bobBefore) - BigInt(bobAfter)).toBe(25000n)
    expect(await db.query("SELECT author FROM social_comments WHERE post_id = $1", [post.postId])).toEqual([{ author: bob.address }])
    expect((await post2("comments", bobSession, { body: "" })).status).toBe(400)

    // The public read of the comments: the body back by its CID, the commenter, the X stamp.
    const listed = await json(await fetch(url(`/api/public/post/${post.shortId}/comments`)))
    expect(listed.status).toBe(200)
    expect(listed.body).toEqual({
      postId: post.postId,
      comments: [{
        id: expect.stringMatching(/^[0-9a-f-]{36}$/), author: { wallet: bob.address, handle: null, assetId: bob.assetId },
        body: "nice <b>post</b>", bodyCid, manifestCid: xm!.cid,
        address: commentRow!.address, derivationPath: commentRow!.derivation_path, txHash: c.body.txid, opReturn: c.body.opReturn,
        createdAt: expect.any(String)
      }],
      next: null
    })
    // Newest first, paged by the `next` cursor.
    expect((await post2("comments", aliceSession, { body: "thanks" })).status).toBe(201)
    const page1 = await json(await fetch(url(`/api/public/post/${post.postId}/comments?limit=1`)))
    expect(page1.body.comments.map((x: any) => x.body)).toEqual(["thanks"])
    expect(page1.body.next).toEqual(expect.any(String))
    const page2 = await json(await fetch(url(`/api/public/post/${post.postId}/comments?limit=1&before=${page1.body.next}`)))
    expect(page2.body).toMatchObject({ comments: [{ body: "nice <b>post</b>" }], next: null })
    for (const bad of ["limit=0", "limit=101", "limit=x", "before=nope"]) {
      const r = await json(await fetch(url(`/api/public/post/${post.postId}/comments?${bad}`)))
      expect(r.status, bad).toBe(400)
    }
    expect((await fetch(url("/api/public/post/zzzzzz/comments"))).status).toBe(404)
  })

  it("rebuilds a text-only post and a comment from the chain by the spec's rules: C is the body that landed, X the comment body", async () => {
    // A reader who knows only the spec's tag table: C "content first lands", X "the service CID
    // of a new comment body"; any other tag is not theirs to read (ours, XM, is skipped).
    const specTags = new Set(["C", "P", "R", "T", "D", "M", "X", "CHV1G", "CHV1N", "CHV1P"])
    const read = async (address: string, tag: string) => {
      const r = await json(await fetch(url(`/api/public/timeline/${address}`)))
      expect(r.status).toBe(200)
      const events = (r.body.events as Array<{ tag: string; cid: string; address: string }>).filter((e) => specTags.has(e.tag) && e.tag === tag)
      return Promise.all(events.map(async (e) => ({ address: e.address, cid: e.cid, text: await (await fetch(url(`/api/stream/${e.cid}`))).text() })))
    }
    const carol = await createSocialAccount(db.url)
    const dave = await createSocialAccount(db.url)
    const carolSession = (await createSession(db.url, carol.address)).token
    const daveSession = (await createSession(db.url, dave.address)).token
    const words = await json(await publish({ body: "only words, no media", kind: "text" }, carolSession))
    expect(words.status, JSON.stringify(words.body)).toBe(201)
    const reply = await json(await fetch(url(`/api/social/posts/${words.body.postId}/comments`), {
      method: "POST", headers: { ...auth(daveSession), "content-type": "application/json" }, body: JSON.stringify({ body: "a reply, read from the chain" })
    }))
    expect(reply.status, JSON.stringify(reply.body)).toBe(201)
    await node.run(Effect.flatMap(UtxoLedger, (l) => l.mine(1, carol.address)))

    const lookup = await json(await fetch(url(`/api/public/post/${words.body.postId}`)))
    const claims = await read(carol.address, "C")
    expect(claims).toEqual([{ address: lookup.body.proof.ownerAddress, cid: rawCid(Buffer.from("only words, no media")), text: "only words, no media" }])
    const comments = await read(dave.address, "X")
    expect(comments).toEqual([{ address: expect.any(String), cid: rawCid(Buffer.from("a reply, read from the chain")), text: "a reply, read from the chain" }])
    expect(comments[0]!.address).not.toBe(lookup.body.proof.ownerAddress)
    expect(reply.body.opReturn.split("|")[1]).toBe(comments[0]!.cid)
  })

  it("only the author takes a post down; T is stamped, the content is 410, the lookup keeps its proof", async () => {
    const other = await json(await fetch(url(`/api/social/posts/${post.shortId}/takedown`), { method: "POST", headers: auth(bobSession) }))
    expect(other).toMatchObject({ status: 403, body: { error: { code: "not_author" } } })
    const r = await json(await fetch(url(`/api/social/posts/${post.shortId}/takedown`), { method: "POST", headers: auth(aliceSession) }))
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ postId: post.postId, state: "taken_down", opReturn: expect.stringMatching(new RegExp(`^T\\|${post.metadataCid}\\|${alice.assetId}\\.`)) })
    const stream = await json(await fetch(url(`/api/stream/${mediaCid}`)))
    expect(stream).toMatchObject({ status: 410, body: { error: { code: "unpinned" } } })
    const lookup = await json(await fetch(url(`/api/public/post/${post.shortId}`)))
    expect(lookup.status).toBe(200)
    expect(lookup.body.post.state).toBe("taken_down")
    expect(lookup.body.proof.txHash).toBe(post.txHash)
    const gone = await (await fetch(url(`/p/${post.shortId}`))).text()
    expect(gone).not.toContain("alert(")
    expect(gone).toContain("This post is taken down")
    // Closed for good: a renewal is refused.
    expect((await fetch(url(`/api/social/posts/${post.shortId}/renew`), { method: "POST", headers: auth(aliceSession) })).status).toBe(409)
  })

  it("runs hosting on the entity's own timers: hosted, then grace (still served), then unpinned; a renewal stamps R", async () => {
    const p = (await json(await publish({ body: "timed", kind: "text" }, bobSession))).body
    const state = async () => (await db.query<{ state: string }>("SELECT state FROM social_posts WHERE id = $1", [p.postId]))[0]!.state
    const served = async () => (await fetch(url(`/api/stream/${p.metadataCid}`))).status
    expect(await state()).toBe("hosted")
    const renewed = await json(await fetch(url(`/api/social/posts/${p.postId}/renew`), { method: "POST", headers: auth(bobSession) }))
    expect(renewed.body).toMatchObject({ state: "hosted", opReturn: expect.stringMatching(/^R\|/) })
    const paidUntil = Date.parse(renewed.body.paidUntil)
    expect(paidUntil - Date.now()).toBeGreaterThan(hostingMs)
    const waitFor = async (want: string) => {
      const deadline = Date.now() + 4 * hostingMs + graceMs
      while ((await state()) !== want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
      return state()
    }
    expect(await waitFor("grace")).toBe("grace")
    expect(Date.now()).toBeGreaterThanOrEqual(paidUntil)
    expect(await served()).toBe(200)
    expect(await waitFor("unpinned")).toBe("unpinned")
    expect(Date.now()).toBeGreaterThanOrEqual(paidUntil + graceMs)
    expect(await served()).toBe(410)
    const tags = await db.query<{ tag: string }>("SELECT tag FROM social_stamps WHERE post_id = $1 ORDER BY seq", [p.postId])
    expect(tags.map((t) => t.tag)).toEqual(["C", "CHV1P", "P", "R"])
  }, 180_000)

  it("account continuity: CHV1G now, CHV1N when the countdown ends on its own timer; a cancelled one never completes", async () => {
    // A wallet of the member's own (not another account: a succession may not take an account's identity).
    const successor = payments.p2pkh({ pubkey: Buffer.from(ECPair.makeRandom({ network: ledgerParams.network }).publicKey), network: ledgerParams.network }).address!
    const started = await json(await fetch(url("/api/social/continuity"), {
      method: "POST", headers: { ...auth(aliceSession), "content-type": "application/json" }, body: JSON.stringify({ newAddress: successor })
    }))
    expect(started.status).toBe(201)
    expect(started.body).toMatchObject({ account: alice.address, newAddress: successor, state: "counting", startedTxid: expect.stringMatching(/^[0-9a-f]{64}$/), completedTxid: null })
    const again = await json(await fetch(url("/api/social/continuity"), {
      method: "POST", headers: { ...auth(aliceSession), "content-type": "application/json" }, body: JSON.stringify({ newAddress: successor })
    }))
    expect(again).toMatchObject({ status: 409, body: { error: { code: "countdown_exists" } } })
    const bobStarted = await json(await fetch(url("/api/social/continuity"), {
      method: "POST", headers: { ...auth(bobSession), "content-type": "application/json" }, body: JSON.stringify({ newAddress: successor })
    }))
    expect(bobStarted.status).toBe(201)
    expect((await json(await fetch(url("/api/social/continuity/cancel"), { method: "POST", headers: auth(bobSession) }))).body.state).toBe("cancelled")
    const row = async (a: string) => (await db.query<{ state: string; completed_txid: string | null; completes_at_ms: string }>(
      "SELECT state, completed_txid, completes_at_ms::text AS completes_at_ms FROM social_continuity WHERE account = $1", [a]))[0]!
    const deadline = Date.now() + countdownMs + 10_000
    while ((await row(alice.address)).state === "counting" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    const done = await row(alice.address)
    expect(done.state).toBe("completed")
    expect(Date.now()).toBeGreaterThanOrEqual(Number(done.completes_at_ms))
    expect((await row(bob.address)).state).toBe("cancelled")
    // Both tags are on the chain, from the identity address, naming the same continuity manifest.
    await node.run(Effect.flatMap(UtxoLedger, (l) => l.mine(1, alice.address)))
    const timeline = await json(await fetch(url(`/api/public/timeline/${alice.address}`)))
    const account = timeline.body.events.filter((e: any) => e.address === alice.address)
    expect(account.map((e: any) => e.tag)).toEqual(["CHV1G", "CHV1N"])
    expect(account[0].cid).toBe(started.body.manifestCid)
    expect(account[1].txid).toBe(done.completed_txid)
    const manifest = await json(await fetch(url(`/api/stream/${started.body.manifestCid}`)))
    expect(manifest.body).toMatchObject({ type: "continuity", account: alice.address, newAddress: successor })
    const bobTimeline = await json(await fetch(url(`/api/public/timeline/${bob.address}`)))
    expect(bobTimeline.body.events.filter((e: any) => e.address === bob.address).map((e: any) => e.tag)).toEqual(["CHV1G"])
    // Bob's comment is his own stamp, on an address derived from his key: his timeline from the chain shows it.
    expect(bobTimeline.body.events.filter((e: any) => e.tag === "X" && e.assetId === bob.assetId)).toHaveLength(1)
  }, 30_000)
})
