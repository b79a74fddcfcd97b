// The token desk listener through the whole stack: a real node on a real Postgres database.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { cli } from "../support/cli.ts"
import { expectOfflineDocsPage } from "../support/http.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { createDeskKey, revokeDeskKey } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
const v1 = "/api/public/v1"

beforeAll(async () => {
  db = await createTestDatabase("desk")
  node = await startNode(db.url)
})
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as Record<string, any> })
const errorOf = (code: string) => ({ error: { code, message: expect.any(String) } })
const keyGet = (apiKey: string, how: "x-api-key" | "bearer" = "x-api-key") =>
  fetch(`${node.deskUrl}${v1}/key`, { headers: how === "x-api-key" ? { "x-api-key": apiKey } : { authorization: `Bearer ${apiKey}` } })

describe("desk listener", () => {
  it("answers on its own port, not the exchange's", async () => {
    expect(node.deskUrl).not.toBe(node.baseUrl)
    const { status, body } = await json(await fetch(`${node.deskUrl}/api/public/status`))
    expect(status).toBe(200)
    expect(body).toMatchObject({ service: "token-desk", status: "ok" })
    expect(Math.abs(body.serverTime - Date.now())).toBeLessThan(5000)
    // Derived from the running node: a devnet with live tokens and every chain serves every order
    // kind; only the webhooks whose partner secret is unset are off (issue 23.9).
    expect(body.live).toMatchObject({ cashout: true, "stables/orders": true, "wrap/orders": true, "wallet-link": true, rewards: true, callbacks: true })
    expect(body.notYetLive).toEqual(["webhooks/partner-a", "webhooks/partner-b"])
    expect(body).toMatchObject({ redemptionQueueDepth: 0, attestationCadence: "hourly" })
    // The exchange's routes are not on the desk's port, and the desk's are not on the exchange's.
    expect((await fetch(`${node.deskUrl}${v1}/ping`)).status).toBe(404)
    expect((await fetch(`${node.baseUrl}/api/public/status`)).status).toBe(404)
  })

  it("answers a CORS preflight on the transparency and registry routes 204 with the CORS headers (issue 23.12)", async () => {
    const paths = ["/api/public/reserves", "/api/public/reserves/history", "/api/public/supply", "/api/public/status", `${v1}/stables/assets`, `${v1}/wrap/assets`]
    for (const path of paths) {
      const r = await fetch(`${node.deskUrl}${path}`, {
        method: "OPTIONS",
        headers: { origin: "https://wallet.example", "access-control-request-method": "GET", "access-control-request-headers": "if-none-match, x-client" }
      })
      expect(r.status, path).toBe(204)
      expect(r.headers.get("access-control-allow-origin")).toBe("*")
      expect(r.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS")
      expect(r.headers.get("access-control-allow-headers")).toBe("if-none-match, x-client")
      expect(Number(r.headers.get("access-control-max-age"))).toBeGreaterThan(0)
      expect(await r.text()).toBe("")
    }
    // Asking for junk headers gets the plain list; a key-authenticated route is no open-CORS route.
    const junk = await fetch(`${node.deskUrl}/api/public/status`, { method: "OPTIONS", headers: { "access-control-request-headers": "a b;c" } })
    expect(junk.headers.get("access-control-allow-headers")).toBe("accept, content-type")
    const keyed = await fetch(`${node.deskUrl}${v1}/cashout/settings`, { method: "OPTIONS" })
    expect(keyed.status).not.toBe(204)
    expect(keyed.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("answers an unknown path 404 in its own shape, not the exchange's {code, msg}", async () => {
    const r = await fetch(`${node.deskUrl}/api/public/v1/nope`)
    expect(r.status).toBe(404)
    expect(r.headers.get("content-type")).toContain("application/json")
    const body = await r.json()
    expect(body).toEqual({ error: { code: "not_found", message: "No such route." } })
    expect(body).not.toHaveProperty("msg")
    expect(Number(r.headers.get("ratelimit-limit"))).toBe(node.config.deskIpWeightPerMin)
  })

  it("serves OpenAPI 3.1 with its own title, servers, paths, key schemes and error shape", async () => {
    const { status, body } = await json(await fetch(`${node.deskUrl}/openapi.json`))
    expect(status).toBe(200)
    expect(body.openapi).toMatch(/^3\.1\./)
    expect(body.info).toMatchObject({ title: "Shardline token desk API", version: "1.0.0" })
    expect(body.servers.length).toBeGreaterThan(0)
    expect(Object.keys(body.paths)).toEqual(expect.arrayContaining([
      "/api/public/reserves", "/api/public/reserves/history", "/api/public/status", "/api/public/supply", `${v1}/key`, `${v1}/stables/assets`, `${v1}/wrap/assets`,
      `${v1}/rewards/balance`, `${v1}/wallet-link`, `${v1}/callbacks`, `${v1}/webhooks/partner-a`, `${v1}/webhooks/partner-b`
    ]))
    // The webhooks are authenticated by their partner's secret, not by a partner key.
    expect(body.paths[`${v1}/webhooks/partner-a`].post.security ?? []).toEqual([])
    expect(body.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" })
    expect(body.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
    const keyOp = body.paths[`${v1}/key`].get
    expect(keyOp.security).toEqual([{ apiKey: [] }, { bearer: [] }])
    expect(Object.keys(keyOp.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "404", "429", "503"]))
    expect(body.paths["/api/public/status"].get.security ?? []).toEqual([])
    expect(JSON.stringify(body.components.schemas.Unauthorized)).toContain("invalid_api_key")
  })

  it("serves a docs page that needs no internet", async () => {
    await expectOfflineDocsPage(`${node.deskUrl}/api-docs`, `${v1}/key`)
  })

  it("lets any origin read transparency routes, and not the partner routes", async () => {
    const status = await fetch(`${node.deskUrl}/api/public/status`, { headers: { origin: "https://example.org" } })
    expect(status.headers.get("access-control-allow-origin")).toBe("*")
    const key = await fetch(`${node.deskUrl}${v1}/key`, { headers: { origin: "https://example.org" } })
    expect(key.status).toBe(401)
    expect(key.headers.get("access-control-allow-origin")).toBeNull()
  })
})

describe("desk key auth", () => {
  it("refuses a missing or wrong key with 401 invalid_api_key", async () => {
    const missing = await fetch(`${node.deskUrl}${v1}/key`)
    expect(missing.status).toBe(401)
    expect(missing.headers.get("www-authenticate")).toBe("Bearer")
    expect(await missing.json()).toEqual(errorOf("invalid_api_key"))
    for (const wrong of ["A".repeat(64), "short", "A".repeat(5000), "é"]) {
      const r = await keyGet(encodeURIComponent(wrong))
      expect(r.status).toBe(401)
      expect(await r.json()).toEqual(errorOf("invalid_api_key"))
    }
    const basic = await fetch(`${node.deskUrl}${v1}/key`, { headers: { authorization: "Basic dXNlcjpwYXNz" } })
    expect(basic.status).toBe(401)
  })

  it("answers a good key with its member, by x-api-key and by Authorization: Bearer alike", async () => {
    const created = await createDeskKey(db.url, { scopes: ["cashout", "rewards"], feeBps: 25, callbackUrl: "https://partner.example/cb" })
    const expected = { memberId: created.memberId, scopes: ["cashout", "rewards"], feeBps: 25, callbackUrl: "https://partner.example/cb" }
    expect(await json(await keyGet(created.apiKey))).toEqual({ status: 200, body: expected })
    expect(await json(await keyGet(created.apiKey, "bearer"))).toEqual({ status: 200, body: expected })
    expect(created.signingSecret).toMatch(/^whsec_[A-Za-z0-9]{43}$/)
    // Stored as a hash only: neither the key nor the signing secret is in any column.
    const rows = await db.query(`SELECT row_to_json(k)::text AS row FROM desk_api_keys k`)
    expect(rows.map((r) => r.row).join("\n")).not.toContain(created.apiKey)
    expect(rows.map((r) => r.row).join("\n")).not.toContain(created.signingSecret)
  })

  it("never shows one member's key another member", async () => {
    const a = await createDeskKey(db.url, { scopes: ["wrap"] })
    const b = await createDeskKey(db.url, { scopes: ["stables"], feeBps: 0 })
    expect(a.memberId).not.toBe(b.memberId)
    const ra = await json(await keyGet(a.apiKey))
    const rb = await json(await keyGet(b.apiKey, "bearer"))
    expect(ra.body).toEqual({ memberId: a.memberId, scopes: ["wrap"], feeBps: null, callbackUrl: null })
    expect(rb.body).toEqual({ memberId: b.memberId, scopes: ["stables"], feeBps: 0, callbackUrl: null })
  })

  it("refuses a revoked key within 2 s, though it was cached", async () => {
    const created = await createDeskKey(db.url, { scopes: ["cashout"] })
    expect((await keyGet(created.apiKey)).status).toBe(200)
    expect((await keyGet(created.apiKey)).status).toBe(200)
    expect(await revokeDeskKey(db.url, created.apiKey)).toBe(true)
    const revokedAt = Date.now()
    let status = 200
    while (status === 200 && Date.now() - revokedAt < 5000) {
      status = (await keyGet(created.apiKey)).status
      if (status === 200) await new Promise((r) => setTimeout(r, 50))
    }
    expect(status).toBe(401)
    expect(Date.now() - revokedAt).toBeLessThan(2000)
    expect((await keyGet(created.apiKey, "bearer")).status).toBe(401)
  })
})

describe("desk keys CLI", () => {
  const env = () => ({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_CALLBACK_ALLOW_HTTP: "false" })

  it("desk keys create --json prints exactly one JSON object, and the key works over HTTP; revoke ends it", async () => {
    const r = await cli(["desk", "keys", "create", "--scopes", "cashout,rewards,stables,wrap", "--callback-url", "https://partner.example/hook", "--fee-bps", "40", "--json"], env())
    expect(r.code).toBe(0)
    expect(r.stdout.trim().split("\n")).toHaveLength(1)
    const out = JSON.parse(r.stdout) as Record<string, string>
    expect(Object.keys(out).sort()).toEqual(["apiKey", "memberId", "signingSecret"])
    expect(out.apiKey).toMatch(/^[A-Za-z0-9]{64}$/)
    const { status, body } = await json(await keyGet(out.apiKey!))
    expect(status).toBe(200)
    expect(body).toEqual({ memberId: out.memberId, scopes: ["cashout", "rewards", "stables", "wrap"], feeBps: 40, callbackUrl: "https://partner.example/hook" })
    const again = JSON.parse((await cli(["desk", "keys", "create", "--scopes", "cashout", "--json"], env())).stdout) as Record<string, string>
    expect(again.memberId).not.toBe(out.memberId)
    const revoke = await cli(["desk", "keys", "revoke", out.apiKey!, "--json"], env())
    expect(revoke.code).toBe(0)
    expect(JSON.parse(revoke.stdout)).toEqual({ revoked: true })
    expect((await cli(["desk", "keys", "revoke", out.apiKey!], env())).code).not.toBe(0)
  }, 120_000)

  it("refuses --fee-bps 20000, an unknown scope and an http callback with one stderr line and a non-zero exit", async () => {
    for (const args of [
      ["--scopes", "cashout", "--fee-bps", "20000"],
      ["--scopes", "cashout,admin"],
      ["--scopes", "cashout", "--callback-url", "http://partner.example/hook"]
    ]) {
      const r = await cli(["desk", "keys", "create", ...args, "--json"], env())
      expect(r.code).not.toBe(0)
      expect(r.stdout).toBe("")
      expect(r.stderr.trim().split("\n")).toHaveLength(1)
    }
    const count = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM desk_api_keys WHERE callback_url LIKE 'http:%'")
    expect(count[0]!.n).toBe("0")
  }, 120_000)
})
