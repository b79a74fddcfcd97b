// The social listener through the whole stack: a real node on a real Postgres database.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { chainSlug } from "../../schemas/social/health.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { expectOfflineDocsPage } from "../support/http.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { createSession, revokeSocialSession } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
const address = "TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K"
const healthPath = `/api/public/${ledgerParams.name}-health`

beforeAll(async () => {
  db = await createTestDatabase("social")
  node = await startNode(db.url)
})
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as Record<string, any> })
const sessionGet = (token?: string) =>
  fetch(`${node.socialUrl}/api/public/v1/session`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
const invalidSession = { error: { code: "invalid_session", message: expect.any(String) } }

describe("social listener", () => {
  it("answers the ledger's health on its own port, open to any origin", async () => {
    expect(chainSlug).toBe(ledgerParams.name)
    const r = await fetch(`${node.socialUrl}${healthPath}`, { headers: { origin: "https://example.org" } })
    expect(r.status).toBe(200)
    expect(r.headers.get("access-control-allow-origin")).toBe("*")
    const body = (await r.json()) as Record<string, unknown>
    const tip = await node.run(Effect.flatMap(UtxoLedger, (l) => l.tip))
    expect(body).toEqual({
      chain: "ledger", height: expect.any(Number), tipHash: expect.stringMatching(/^[0-9a-f]{64}$/), kind: "devnet",
      hotWallet: { address: expect.stringMatching(/^T/), balance: expect.stringMatching(/^\d+(\.\d+)?$/) }, topUpAddress: expect.stringMatching(/^T/)
    })
    expect(Math.abs((body.height as number) - tip.height)).toBeLessThanOrEqual(1)
    // Not on the exchange's port or the desk's.
    expect((await fetch(`${node.baseUrl}${healthPath}`)).status).toBe(404)
    expect((await fetch(`${node.deskUrl}${healthPath}`)).status).toBe(404)
  })

  it("follows the tip as blocks are mined", async () => {
    const before = (await json(await fetch(`${node.socialUrl}${healthPath}`))).body
    await node.run(Effect.flatMap(UtxoLedger, (l) => l.mine(2, address)))
    const after = (await json(await fetch(`${node.socialUrl}${healthPath}`))).body
    expect(after.height).toBeGreaterThanOrEqual(before.height + 2)
    expect(after.tipHash).not.toBe(before.tipHash)
  })

  it("answers an unknown path 404 in its own shape, not the exchange's {code, msg}", async () => {
    const r = await fetch(`${node.socialUrl}/api/public/v1/ping`)
    expect(r.status).toBe(404)
    const body = await r.json()
    expect(body).toEqual({ error: { code: "not_found", message: "No such route." } })
    expect(body).not.toHaveProperty("code")
  })

  it("serves OpenAPI 3.1 listing its paths, a bearer scheme and its error shape", async () => {
    const { status, body } = await json(await fetch(`${node.socialUrl}/openapi.json`))
    expect(status).toBe(200)
    expect(body.openapi).toMatch(/^3\.1\./)
    expect(body.info).toMatchObject({ title: "Shardline social API", version: "1.0.0" })
    expect(body.servers.length).toBeGreaterThan(0)
    expect(Object.keys(body.paths).sort()).toEqual([
      "/api/public/auth/sign-out", "/api/public/auth/wallet-callback", "/api/public/auth/wallet-challenge", "/api/public/auth/wallet-exchange", "/api/public/auth/wallet-status",
      "/api/public/ledger-health", "/api/public/ledger-verify-message", "/api/public/oembed", "/api/public/post/{id}", "/api/public/post/{id}/comments", "/api/public/timeline/{address}",
      "/api/public/v1/session", "/api/public/v1/sessions", "/api/public/v1/sessions/{id}", "/api/public/v1/stamp-signing", "/api/public/v1/wallet-link", "/api/social/continuity", "/api/social/continuity/cancel", "/api/social/me", "/api/social/posts", "/api/social/posts/{id}/comments",
      "/api/social/posts/{id}/comments/{commentId}/signatures", "/api/social/posts/{id}/comments/{commentId}/unsigned",
      "/api/social/posts/{id}/metadata", "/api/social/posts/{id}/renew", "/api/social/posts/{id}/signatures", "/api/social/posts/{id}/takedown",
      "/api/social/posts/{id}/unsigned", "/api/social/posts/{id}/wallet-signing", "/api/social/upload", "/api/social/wallet-link", "/api/social/wallet-link/{challengeId}", "/api/stream/{cid}",
      "/embed/live/by-wallet/{wallet}", "/embed/live/{streamId}", "/embed/p/{id}", "/embed/{cid}", "/live/{streamId}/index.m3u8", "/p/{id}"
    ])
    expect(body.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
    expect(body.paths["/api/public/v1/session"].get.security).toEqual([{ bearer: [] }, { cookie: [] }])
    expect(JSON.stringify(body.components.schemas.Unauthorized)).toContain("invalid_session")
  })

  it("serves a docs page that needs no internet", async () => {
    await expectOfflineDocsPage(`${node.socialUrl}/api-docs`, "/api/public/v1/session")
  })
})

describe("social sessions", () => {
  it("refuses no session, a junk one and an expired one with 401 invalid_session", async () => {
    const none = await sessionGet()
    expect(none.status).toBe(401)
    expect(none.headers.get("www-authenticate")).toBe("Bearer")
    expect(await none.json()).toEqual(invalidSession)
    expect(await json(await sessionGet("x".repeat(64)))).toEqual({ status: 401, body: invalidSession })
    const expired = await createSession(db.url, address, -1000)
    expect(await json(await sessionGet(expired.token))).toEqual({ status: 401, body: invalidSession })
  })

  it("answers a valid session with its address and expiry, and no CORS header", async () => {
    const s = await createSession(db.url, address, 3600_000)
    const r = await sessionGet(s.token)
    expect(r.headers.get("access-control-allow-origin")).toBeNull()
    // The session carries its CSRF token for cookie-session writes (issue 27.2, docs/webapp.md).
    expect(await json(r)).toEqual({ status: 200, body: { address, expiresAt: s.expiresAt.toISOString(), csrfToken: expect.stringMatching(/^[0-9a-f]{64}$/) } })
    const other = await createSession(db.url, "TAnotherAddressXXXXXXXXXXXXXXXXXX", 3600_000)
    expect((await json(await sessionGet(other.token))).body.address).toBe("TAnotherAddressXXXXXXXXXXXXXXXXXX")
    const rows = await db.query<{ row: string }>("SELECT row_to_json(s)::text AS row FROM web_sessions s")
    expect(rows.map((x) => x.row).join("\n")).not.toContain(s.token)
  })

  it("ends a cached session when it expires, and a revoked one within 2 s", async () => {
    const short = await createSession(db.url, address, 1500)
    expect((await sessionGet(short.token)).status).toBe(200)
    await new Promise((r) => setTimeout(r, Math.max(0, short.expiresAt.getTime() - Date.now()) + 50))
    expect((await sessionGet(short.token)).status).toBe(401)

    const s = await createSession(db.url, address, 3600_000)
    expect((await sessionGet(s.token)).status).toBe(200)
    expect(await revokeSocialSession(db.url, s.token)).toBe(true)
    const revokedAt = Date.now()
    let status = 200
    while (status === 200 && Date.now() - revokedAt < 5000) {
      status = (await sessionGet(s.token)).status
      if (status === 200) await new Promise((r) => setTimeout(r, 50))
    }
    expect(status).toBe(401)
    expect(Date.now() - revokedAt).toBeLessThan(2000)
  })
})
