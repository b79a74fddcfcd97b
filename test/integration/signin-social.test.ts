// Social QR sign-in and wallet link v1 through the whole stack: a real node on a real Postgres,
// real BIP-137 signatures made by the chain layer's signer, the SignInChallenge and
// SocialLinkToken entities with their durable expiry.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { unwrap } from "../../harness/either.ts"
import { SignInChallenge, MintChallenge } from "../../schemas/social/identity.ts"
import { extendedKeysAt, signingKeyAt } from "../../src/chain/keys.ts"
import { base62Token, sha256Hex } from "../../src/crypto/token.ts"
import { configLayer } from "../../src/config.ts"
import { newLinkToken } from "../../src/platform/identity/linkTokens.ts"
import { issueSocialLinkToken } from "../../src/social/identity/issueLinkToken.ts"
import { cli, cliJson } from "../support/cli.ts"
import { makeWallet, type SignKind, type TestWallet } from "../support/linkWallet.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { signInWithWallet } from "../support/walletSignIn.ts"
import { pgClientLayer } from "../support/pg.ts"
import { randomBytes } from "node:crypto"

let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  db = await createTestDatabase("signin")
  node = await startNode(db.url, { SHARDLINE_MESSAGE_POLL_MS: "200" })
}, 60_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)
const query = <A extends object>(text: string) => inNode(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text)))
const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as Record<string, any>, headers: r.headers })
const auth = (path: string) => `${node.socialUrl}/api/public/auth/${path}`
const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }).then(json)
const cookieOf = (headers: Headers, name: string) => {
  const set = headers.get("set-cookie") ?? ""
  const m = new RegExp(`${name}=([^;]+)`).exec(set)
  return m === null ? undefined : `${name}=${m[1]}`
}

/** A browser starts a sign-in: the challenge and the cookie it got. */
const startSignIn = async () => {
  const r = await postJson(auth("wallet-challenge"), undefined)
  expect(r.status).toBe(200)
  const cookie = cookieOf(r.headers, "sl_signin")
  expect(cookie).toBeDefined()
  return { challenge: r.body, cookie: cookie! }
}
const status = (id: string, cookie?: string) => fetch(auth(`wallet-status?id=${id}`), { headers: cookie === undefined ? {} : { cookie } }).then(json)
const messageOf = async (id: string) => (await fetch(auth(`wallet-callback?id=${id}`)).then(json)).body.message as string
const callback = (id: string, wallet: TestWallet, message: string, kind: SignKind = "compressed") =>
  postJson(auth("wallet-callback"), { id, address: wallet.addressFor[kind], signature: wallet.sign(message, kind) })

describe("QR sign-in", () => {
  it("challenge → status pending → wallet signs the callback's message → status signed with a one-time token → exchange → a session (bearer and cookie)", async () => {
    const { challenge, cookie } = await startSignIn()
    expect(challenge.qr).toMatchObject({
      version: 1, type: "wl-login", origin: node.socialUrl, id: challenge.id, chain: "ledger",
      callback: `${node.socialUrl}/api/public/auth/wallet-callback?id=${challenge.id}`
    })
    expect(challenge.qr.statement).toMatch(/No payment/)
    expect(challenge.qr.expiry * 1000 - Date.now()).toBeGreaterThan(4.5 * 60_000)
    expect(challenge.qr.expiry * 1000 - Date.now()).toBeLessThanOrEqual(5 * 60_000)
    expect(challenge.pollIntervalMs).toBe(2000)
    const deep = new URL(challenge.deepLink)
    expect(deep.protocol).toBe("shardline-wallet:")
    expect(JSON.parse(Buffer.from(deep.searchParams.get("envelope")!, "base64url").toString())).toEqual(challenge.qr)

    expect((await status(challenge.id, cookie)).body).toMatchObject({ id: challenge.id, status: "pending" })
    expect((await status(challenge.id, cookie)).body.token).toBeUndefined()
    const message = await messageOf(challenge.id)
    expect(message).toContain(challenge.id)
    expect(message).toContain(challenge.qr.nonce)
    expect(message).toContain(node.socialUrl)
    const wallet = makeWallet()
    const signed = await callback(challenge.id, wallet, message)
    expect(signed.status, JSON.stringify(signed.body)).toBe(200)
    expect(signed.body).toEqual({ id: challenge.id, status: "signed", address: wallet.addresses.p2pkh })
    // One signature per challenge.
    const again = await callback(challenge.id, makeWallet(), message)
    expect(again).toMatchObject({ status: 409, body: { error: { code: "already_signed" } } })
    // Someone who saw the QR (the id) but lacks the browser's cookie never gets the token.
    const onlooker = await status(challenge.id)
    expect(onlooker.body.status).toBe("signed")
    expect(onlooker.body.token).toBeUndefined()
    const mine = await status(challenge.id, cookie)
    expect(mine.body).toMatchObject({ status: "signed", address: wallet.addresses.p2pkh })
    const token = mine.body.token as string
    expect(token.startsWith(`${challenge.id}.`)).toBe(true)

    const exchanged = await postJson(auth("wallet-exchange"), { token })
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200)
    expect(exchanged.body).toMatchObject({ tokenType: "Bearer", address: wallet.addresses.p2pkh })
    const days = (Date.parse(exchanged.body.expiresAt) - Date.now()) / 86_400_000
    expect(days).toBeGreaterThan(6.9)
    const sessionCookie = cookieOf(exchanged.headers, "sl_session")
    expect(sessionCookie).toBe(`sl_session=${exchanged.body.token}`)
    expect(exchanged.headers.get("set-cookie")).toMatch(/HttpOnly/)
    const byBearer = await fetch(`${node.socialUrl}/api/public/v1/session`, { headers: { authorization: `Bearer ${exchanged.body.token}` } }).then(json)
    expect(byBearer.body).toMatchObject({ address: wallet.addresses.p2pkh })
    const byCookie = await fetch(`${node.socialUrl}/api/public/v1/session`, { headers: { cookie: sessionCookie! } }).then(json)
    expect(byCookie.status).toBe(200)
    expect(byCookie.body.address).toBe(wallet.addresses.p2pkh)

    // One-time: a second exchange, a later status, a late callback.
    expect(await postJson(auth("wallet-exchange"), { token })).toMatchObject({ status: 410, body: { error: { code: "token_used" } } })
    expect((await status(challenge.id, cookie)).body.status).toBe("used")
    expect((await callback(challenge.id, wallet, message)).status).toBe(409)
  })

  it("gives the minting browser a fresh token each poll; only the newest one exchanges", async () => {
    const { challenge, cookie } = await startSignIn()
    const wallet = makeWallet()
    expect((await callback(challenge.id, wallet, await messageOf(challenge.id))).status).toBe(200)
    const first = (await status(challenge.id, cookie)).body.token as string
    const second = (await status(challenge.id, cookie)).body.token as string
    expect(second).not.toBe(first)
    expect((await postJson(auth("wallet-exchange"), { token: first })).status).toBe(410)
    expect((await postJson(auth("wallet-exchange"), { token: second })).status).toBe(200)
  })

  it("accepts every BIP-137 header kind and Electrum-style signatures, for legacy and bech32 addresses", async () => {
    for (const kind of ["compressed", "uncompressed", "p2sh-p2wpkh", "p2wpkh", "electrum-p2sh", "electrum-p2wpkh"] as const) {
      const { challenge } = await startSignIn()
      const wallet = makeWallet()
      const r = await callback(challenge.id, wallet, await messageOf(challenge.id), kind)
      expect(r.status, `${kind}: ${JSON.stringify(r.body)}`).toBe(200)
      expect(r.body.address).toBe(wallet.addressFor[kind])
    }
  })

  it("refuses bad input with 400 and a wrong signature with 401; the challenge stays signable", async () => {
    const { challenge, cookie } = await startSignIn()
    const wallet = makeWallet()
    const message = await messageOf(challenge.id)
    const other = await startSignIn()
    const cases: Array<[string, unknown, number]> = [
      ["bad base64", { id: challenge.id, address: wallet.addresses.p2pkh, signature: "%%%" }, 400],
      ["short signature", { id: challenge.id, address: wallet.addresses.p2pkh, signature: Buffer.alloc(64).toString("base64") }, 400],
      ["bitcoin address", { id: challenge.id, address: "1BoatSLRHtKNngkdXEeobR76b53LETtpyT", signature: wallet.sign(message) }, 400],
      ["malformed id", { id: "nope", address: wallet.addresses.p2pkh, signature: wallet.sign(message) }, 400],
      ["oversized address", { id: challenge.id, address: "T".repeat(500), signature: wallet.sign(message) }, 400],
      ["another message", { id: challenge.id, address: wallet.addresses.p2pkh, signature: wallet.sign("hello") }, 401],
      // A signature the wallet made for another challenge (a replayed envelope from another app).
      ["another challenge", { id: challenge.id, address: wallet.addresses.p2pkh, signature: wallet.sign(await messageOf(other.challenge.id)) }, 401],
      ["another key", { id: challenge.id, address: wallet.addresses.p2pkh, signature: makeWallet().sign(message) }, 401]
    ]
    for (const [name, body, code] of cases) {
      const r = await postJson(auth("wallet-callback"), body)
      expect(r.status, `${name}: ${JSON.stringify(r.body)}`).toBe(code)
      expect(r.body.error.code).toBe(code === 400 ? "invalid_parameter" : "invalid_signature")
    }
    expect((await status(challenge.id, cookie)).body.status).toBe("pending")
    expect((await callback(challenge.id, wallet, message)).status).toBe(200)
    expect((await status("short")).status).toBe(400)
    expect((await status(base62Token(22))).status).toBe(410)
    expect((await postJson(auth("wallet-exchange"), { token: "garbage" })).status).toBe(400)
    expect((await postJson(auth("wallet-exchange"), { token: `${challenge.id}.${base62Token(43)}` })).status).toBe(410)
  })

  it("expires a challenge by its own durable timer: 410 token_expired, status expired", async () => {
    const id = base62Token(22)
    const now = Date.now()
    await node.run(Effect.flatMap(SignInChallenge.client, (c) => c(id).Mint(new MintChallenge({
      nonce: base62Token(16), origin: node.socialUrl, browserHash: sha256Hex("x"), issuedAtMs: now, expiresAtMs: now + 1500
    }))))
    const message = await messageOf(id)
    await expect.poll(async () => (await query<{ status: string }>(`SELECT status FROM signin_challenges WHERE id = '${id}'`))[0]!.status,
      { timeout: 10_000, interval: 200 }).toBe("expired")
    expect(await callback(id, makeWallet(), message)).toMatchObject({ status: 410, body: { error: { code: "token_expired" } } })
    expect((await status(id)).body.status).toBe("expired")
  })
})

describe("social wallet link v1", () => {
  const socialXpub = (seed: Uint8Array) => unwrap(extendedKeysAt(seed, "m/44'/696969'/1101'")).xpub
  const newAccount = async (wallet: TestWallet) => {
    await query(`INSERT INTO social_accounts (address, asset_id) VALUES ('${wallet.addresses.p2pkh}', '${randomBytes(3).toString("hex").toUpperCase()}')`)
    return wallet.addresses.p2pkh
  }
  const link = (manifest: Record<string, any>, wallet: TestWallet, xpub: string, token: string, kind: SignKind = "compressed") =>
    postJson(`${node.socialUrl}/api/public/v1/wallet-link`, {
      version: 1, type: "wl-link-xpubs", identity_address: manifest.identity_address, xpub, xpub_path: "m/44'/696969'/1101'",
      signature: wallet.sign(manifest.message, kind), token
    })

  it("shows the consent manifest with the exact message and challenge; links the xpub once; posting addresses derive from it", async () => {
    const seed = randomBytes(32)
    const wallet = makeWallet(seed)
    const account = await newAccount(wallet)
    const issued = await inNode(issueSocialLinkToken(account))
    expect(issued.url).toBe(`${node.socialUrl}/api/public/v1/wallet-link?token=${issued.token}`)
    const { status: s, body: manifest } = await fetch(issued.url).then(json)
    expect(s).toBe(200)
    expect(manifest).toMatchObject({ version: 1, type: "wl-link-xpubs", identity_address: account, xpub_path: "m/44'/696969'/1101'", origin: node.socialUrl })
    expect(manifest.message).toContain(manifest.challenge)
    expect(manifest.message).toContain(account)
    const xpub = socialXpub(seed)
    // Malformed first: 400, the token still usable.
    const bad = await postJson(`${node.socialUrl}/api/public/v1/wallet-link`, {
      version: 1, type: "wl-link-xpubs", identity_address: account, xpub: "Tpub-nope", xpub_path: "m/44'/696969'/1101'", signature: wallet.sign(manifest.message), token: issued.token
    })
    expect(bad.status).toBe(400)
    const oversized = await postJson(`${node.socialUrl}/api/public/v1/wallet-link`, { version: 1, type: "wl-link-xpubs", identity_address: account, xpub: "x".repeat(100_000), xpub_path: "m", signature: "", token: issued.token })
    expect([400, 413]).toContain(oversized.status)
    const linked = await link(manifest, wallet, xpub, issued.token, "p2sh-p2wpkh" as SignKind)
    // A P2SH-P2WPKH signature names the P2SH address, not the account: refused as another account's.
    expect(linked.status).toBe(401)
    const ok = await link(manifest, wallet, xpub, issued.token)
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body).toMatchObject({ identity_address: account, xpub_path: "m/44'/696969'/1101'", posting_path: "m/44'/696969'/1101'/0/0/0" })
    // The address the composer stamps post 0 from (m/…/1101'/0/0/0).
    expect(ok.body.first_posting_address).toBe(unwrap(signingKeyAt(seed, "m/44'/696969'/1101'/0/0/0")).address)
    const [row] = await query<{ xpub: string; xpub_path: string }>(`SELECT xpub, xpub_path FROM social_accounts WHERE address = '${account}'`)
    expect(row).toEqual({ xpub, xpub_path: "m/44'/696969'/1101'" })
    expect(await link(manifest, wallet, xpub, issued.token)).toMatchObject({ status: 410, body: { error: { code: "token_used" } } })
    expect((await fetch(issued.url).then(json)).status).toBe(410)
  })

  it("refuses an envelope signed for another link (replay from another app) and an xpub linked to another account", async () => {
    const seedA = randomBytes(32)
    const a = makeWallet(seedA)
    const accountA = await newAccount(a)
    const first = await inNode(issueSocialLinkToken(accountA))
    const manifestA = (await fetch(first.url).then(json)).body
    expect((await link(manifestA, a, socialXpub(seedA), first.token)).status).toBe(200)
    // A second link token for the same account: the old signature (over the old challenge) is refused.
    const second = await inNode(issueSocialLinkToken(accountA))
    const replay = await link(manifestA, a, socialXpub(seedA), second.token)
    expect(replay).toMatchObject({ status: 401, body: { error: { code: "invalid_signature" } } })
    // Account B tries to take A's xpub.
    const b = makeWallet()
    const accountB = await newAccount(b)
    const tokenB = await inNode(issueSocialLinkToken(accountB))
    const manifestB = (await fetch(tokenB.url).then(json)).body
    expect(await link(manifestB, b, socialXpub(seedA), tokenB.token)).toMatchObject({ status: 409, body: { error: { code: "wallet_linked" } } })
    expect((await fetch(`${node.socialUrl}/api/public/v1/wallet-link?token=${newLinkToken()}`).then(json)).status).toBe(410)
  })

  it("social link-token CLI prints {token, url, expiresAt} and refuses an unknown account", async () => {
    // No port setting: the URL is the running node's (its listener on a port of its own), not 8180 (issue 23.17).
    const env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
    const wallet = makeWallet()
    const account = await newAccount(wallet)
    const out = cliJson<{ token: string; url: string; expiresAt: string }>(await cli(["social", "link-token", "--account", account, "--json"], env))
    expect(out.url).toBe(`${node.socialUrl}/api/public/v1/wallet-link?token=${out.token}`)
    expect((await fetch(out.url).then(json)).body.identity_address).toBe(account)
    const refused = await cli(["social", "link-token", "--account", "Tnope", "--json"], env)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("no social account")
  })
})

describe("cookie sessions: cross-site writes (issue 27.2), sign-out and the session list (27.10)", () => {
  const site = () => new URL(node.socialUrl)
  const continuity = (headers: Record<string, string>, body: string) =>
    fetch(`${node.socialUrl}/api/social/continuity`, { method: "POST", headers, body }).then(json)

  it("refuses a cookie-session change from another origin or as a form/text body; same-origin JSON, the CSRF token and bearer pass", async () => {
    const me = await signInWithWallet(node.socialUrl, makeWallet())
    const body = JSON.stringify({ newAddress: makeWallet().addresses.p2pkh })
    const otherPort = `http://${site().hostname}:${Number(site().port) + 1}`
    // A page on another port of the same host (same site for SameSite): text/plain needs no preflight.
    const crossSite = await continuity({ cookie: me.cookie, "content-type": "text/plain", origin: otherPort }, body)
    expect(crossSite.status, JSON.stringify(crossSite.body)).toBe(403)
    expect(crossSite.body.error.code).toBe("cross_site_refused")
    expect((await continuity({ cookie: me.cookie, "content-type": "application/json", "sec-fetch-site": "same-site" }, body)).status).toBe(403)
    expect((await continuity({ cookie: me.cookie, "content-type": "application/json" }, body)).status).toBe(403)
    // Same origin but a form-able body.
    expect((await continuity({ cookie: me.cookie, "content-type": "text/plain", "sec-fetch-site": "same-origin" }, body)).status).toBe(403)
    expect((await continuity({ cookie: me.cookie, "content-type": "application/x-www-form-urlencoded", origin: node.socialUrl }, body)).status).toBe(403)
    // Reading stays open to the cookie.
    const view = await fetch(`${node.socialUrl}/api/public/v1/session`, { headers: { cookie: me.cookie } }).then(json)
    expect(view.status).toBe(200)
    // The service's own pages: same origin and JSON; or the session's CSRF token.
    const sameOrigin = await continuity({ cookie: me.cookie, "content-type": "application/json", origin: node.socialUrl }, body)
    expect(sameOrigin.body.error?.code).not.toBe("cross_site_refused")
    expect(sameOrigin.status).not.toBe(401)
    const withToken = await continuity({ cookie: me.cookie, "content-type": "text/plain", "x-csrf-token": view.body.csrfToken }, body)
    expect(withToken.body.error?.code).not.toBe("cross_site_refused")
    expect((await continuity({ cookie: me.cookie, "content-type": "text/plain", "x-csrf-token": "0".repeat(64) }, body)).status).toBe(403)
    // A bearer session cannot be sent by another site's page: unaffected.
    const bearer = await continuity({ authorization: `Bearer ${me.token}`, "content-type": "text/plain", origin: otherPort }, body)
    expect(bearer.body.error?.code).not.toBe("cross_site_refused")
  })

  it("lists the address's sessions, ends another one by id, and signs out this one everywhere (cookie cleared)", async () => {
    const wallet = makeWallet()
    const laptop = await signInWithWallet(node.socialUrl, wallet)
    const phone = await signInWithWallet(node.socialUrl, wallet)
    const stranger = await signInWithWallet(node.socialUrl, makeWallet())
    const get = (path: string, s: { token: string }) => fetch(`${node.socialUrl}${path}`, { headers: { authorization: `Bearer ${s.token}` } }).then(json)
    const post = (path: string, s: { token: string }, method = "POST") => fetch(`${node.socialUrl}${path}`, { method, headers: { authorization: `Bearer ${s.token}` } }).then(json)
    const listed = await get("/api/public/v1/sessions", laptop)
    expect(listed.status).toBe(200)
    expect(listed.body.sessions).toHaveLength(2)
    const current = listed.body.sessions.find((s: any) => s.current)
    const other = listed.body.sessions.find((s: any) => !s.current)
    expect(current.id).toMatch(/^[0-9a-f]{16}$/)
    // Another address cannot end it.
    expect((await post(`/api/public/v1/sessions/${other.id}`, stranger, "DELETE")).status).toBe(404)
    expect((await post(`/api/public/v1/sessions/nothex`, laptop, "DELETE")).status).toBe(404)
    expect(await post(`/api/public/v1/sessions/${other.id}`, laptop, "DELETE")).toMatchObject({ status: 200, body: { id: other.id, ended: true } })
    expect((await get("/api/public/v1/session", phone)).status).toBe(401)
    // Sign-out by the cookie (a same-origin page): the session ends at once and the cookie is cleared.
    const out = await fetch(`${node.socialUrl}/api/public/auth/sign-out`, { method: "POST", headers: { cookie: laptop.cookie, origin: node.socialUrl } })
    expect(out.status).toBe(200)
    expect(out.headers.get("set-cookie")).toMatch(/^sl_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/)
    expect((await get("/api/public/v1/session", laptop)).status).toBe(401)
    expect((await fetch(`${node.socialUrl}/api/public/v1/session`, { headers: { cookie: laptop.cookie } })).status).toBe(401)
    // A signed-out session cannot sign out again; a cross-site sign-out is refused.
    expect((await post("/api/public/auth/sign-out", laptop)).status).toBe(401)
    const strangerOut = await fetch(`${node.socialUrl}/api/public/auth/sign-out`, { method: "POST", headers: { cookie: stranger.cookie, origin: "http://evil.example" } })
    expect(strangerOut.status).toBe(403)
    expect((await get("/api/public/v1/session", stranger)).status).toBe(200)
  })
})
