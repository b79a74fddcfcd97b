// The exchange's HTTP layer through the whole stack: a real node on a real Postgres database. Every
// test runs twice: with the edge's fast lane (hot public GETs answered in node:http) and without it
// (everything through the Effect app), so both paths must give the same answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sign } from "../../src/exchange/auth/signature.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import type { OpsView } from "../../src/platform/ops/OpsView.ts"
import { eventually } from "../support/chainsOps.ts"
import { expectOfflineDocsPage } from "../support/http.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { signedGet, signedQuery, type Key } from "../../harness/signed.ts"

describe.each([["fast lane", "true"], ["Effect only", "false"]])("exchange HTTP (%s)", (_lane, fastLane) => {
  let db: TestDatabase
  let node: RunningNode
  let readKey: Key & { userId: number }
  const v1 = "/api/public/v1"

  beforeAll(async () => {
    db = await createTestDatabase("http")
    node = await startNode(db.url, { SHARDLINE_RATE_LIMIT_KEY_WEIGHT: "100000", SHARDLINE_RATE_LIMIT_IP_WEIGHT: "100000", SHARDLINE_HTTP_FAST_LANE: fastLane, SHARDLINE_HTTP_SIGNED_LANE: fastLane })
    readKey = await createKey(db.url, { scopes: ["read"], addresses: ["TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K"] })
  })
  afterAll(async () => {
    await node?.stop()
    await db?.drop()
  })

  const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> })

  describe("public endpoints", () => {
    it("ping answers {} and time answers serverTime close to now, under v1 and v3", async () => {
      for (const base of [v1, "/api/v3"]) {
        expect(await json(await fetch(`${node.baseUrl}${base}/ping`))).toEqual({ status: 200, body: {} })
        const t = await json(await fetch(`${node.baseUrl}${base}/time`))
        expect(t.status).toBe(200)
        expect(Math.abs((t.body.serverTime as number) - Date.now())).toBeLessThan(2000)
      }
    })

    it("serves the index document with the spec's fields", async () => {
      const { status, body } = await json(await fetch(`${node.baseUrl}${v1}`))
      expect(status).toBe(200)
      expect(Object.keys(body).sort()).toEqual(["compat", "custody", "docs", "exchange", "openapi", "public", "signed", "version"])
      expect(body.custody).toBe("non-custodial")
      expect(body.openapi).toBe(`${v1}/openapi.json`)
      expect(body.docs).toBe("/api-docs")
      expect((body.signed as Record<string, string>).account).toMatch(/^GET \/api\/public\/v1\/account\?/)
    })

    it("serves OpenAPI 3.1 generated from the same definitions, version 1.0.0", async () => {
      const { status, body } = await json(await fetch(`${node.baseUrl}${v1}/openapi.json`))
      expect(status).toBe(200)
      expect(body.openapi).toBe("3.1.0")
      expect((body.info as { version: string }).version).toBe("1.0.0")
      const paths = Object.keys(body.paths as object)
      expect(paths).toEqual(expect.arrayContaining([`${v1}/ping`, `${v1}/time`, `${v1}/account`, v1]))
    })

    it("serves a docs page that needs no internet (no external script or style)", async () => {
      await expectOfflineDocsPage(`${node.baseUrl}/api-docs`, `${v1}/account`)
    })

    it("answers an unknown path with a JSON error body, not a 500", async () => {
      const r = await fetch(`${node.baseUrl}${v1}/nope`)
      expect(r.status).toBe(404)
      expect(await r.json()).toEqual({ code: -1020, msg: "This operation is not supported." })
    })

    it("carries the used-weight headers on every exchange response", async () => {
      const r = await fetch(`${node.baseUrl}${v1}/time`)
      expect(Number(r.headers.get("x-mbx-used-weight-1m"))).toBeGreaterThan(0)
      expect(r.headers.get("x-svc-used-weight-1m")).toBe(r.headers.get("x-mbx-used-weight-1m"))
    })
  })

  describe("signed account", () => {
    it("returns addresses and no authorizations for a new user, via X-MBX-APIKEY or X-SVC-APIKEY", async () => {
      const a = await json(await signedGet(node.baseUrl, `${v1}/account`, readKey))
      expect(a.status).toBe(200)
      expect(a.body.uid).toBe(readKey.userId)
      expect(a.body.addresses).toEqual([{ address: "TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K", type: "p2pkh" }])
      expect(a.body.authorizations).toEqual([])
      expect(a.body.balances).toEqual([])
      const b = await fetch(`${node.baseUrl}/api/v3/account?${signedQuery(readKey, {})}`, { headers: { "X-SVC-APIKEY": readKey.apiKey } })
      expect(b.status).toBe(200)
    })

    it("refuses an unknown key with 401 -2015", async () => {
      const r = await json(await signedGet(node.baseUrl, `${v1}/account`, { apiKey: "A".repeat(64), secretKey: readKey.secretKey }))
      expect(r).toEqual({ status: 401, body: { code: -2015, msg: "Invalid API-key, IP, or permissions for action." } })
      const none = await json(await fetch(`${node.baseUrl}${v1}/account?${signedQuery(readKey, {})}`))
      expect(none.body.code).toBe(-2015)
    })

    it("refuses a wrong signature with -1022 and a missing one with -1102", async () => {
      const bad = await json(await signedGet(node.baseUrl, `${v1}/account`, { apiKey: readKey.apiKey, secretKey: "x".repeat(64) }))
      expect(bad).toEqual({ status: 400, body: { code: -1022, msg: "Signature for this request is not valid." } })
      const missing = await json(await fetch(`${node.baseUrl}${v1}/account?timestamp=${Date.now()}`, { headers: { "X-MBX-APIKEY": readKey.apiKey } }))
      expect(missing.body).toEqual({ code: -1102, msg: "Mandatory parameter 'signature' was not sent, was empty/null, or malformed." })
    })

    it("refuses stale, future and malformed timestamps", async () => {
      const stale = await json(await signedGet(node.baseUrl, `${v1}/account`, readKey, { timestamp: Date.now() - 10_000 }))
      expect(stale.body.code).toBe(-1021)
      const ahead = await json(await signedGet(node.baseUrl, `${v1}/account`, readKey, { timestamp: Date.now() + 5000 }))
      expect(ahead.body.code).toBe(-1021)
      const wide = await json(await signedGet(node.baseUrl, `${v1}/account`, readKey, { timestamp: Date.now() - 10_000, recvWindow: 20_000 }))
      expect(wide.status).toBe(200)
      const tooWide = await json(await signedGet(node.baseUrl, `${v1}/account`, readKey, { recvWindow: 60_001 }))
      expect(tooWide.body.code).toBe(-1131)
      const q = "timestamp=abc"
      const illegal = await json(await fetch(`${node.baseUrl}${v1}/account?${q}&signature=${sign(readKey.secretKey, q)}`, { headers: { "X-MBX-APIKEY": readKey.apiKey } }))
      expect(illegal).toEqual({ status: 400, body: { code: -1100, msg: "Illegal characters found in parameter 'timestamp'; legal range is '^[0-9]{1,20}$'." } })
      const noTs = await json(await fetch(`${node.baseUrl}${v1}/account?signature=${sign(readKey.secretKey, "")}`, { headers: { "X-MBX-APIKEY": readKey.apiKey } }))
      expect(noTs.body.code).toBe(-1102)
    })

    it("accepts a signature over query + form body, and an empty JSON body", async () => {
      // A form POST to a real signed route, parameters split between the query and the body:
      // a good signature gets past the check to the symbol check (-1121); a wrong one is -1022.
      const trader = await createKey(db.url, { scopes: ["read", "trade"] })
      const query = "recvWindow=5000&symbol=NOPE_USDT"
      const body = `&side=BUY&type=LIMIT&price=1&quantity=1&timestamp=${Date.now()}`
      const orderPost = (signature: string) =>
        fetch(`${node.baseUrl}${v1}/order?${query}`, {
          method: "POST",
          headers: { "X-MBX-APIKEY": trader.apiKey, "content-type": "application/x-www-form-urlencoded" },
          body: `${body}&signature=${signature}`
        })
      expect(await json(await orderPost(sign(trader.secretKey, query + body))))
        .toEqual({ status: 400, body: { code: -1121, msg: "Invalid symbol." } })
      // Signed over the body alone (the query left out of the HMAC): refused.
      const wrong = await json(await orderPost(sign(trader.secretKey, body)))
      expect({ status: wrong.status, code: wrong.body.code }).toEqual({ status: 400, code: -1022 })
      const q = signedQuery(readKey, {})
      const r = await fetch(`${node.baseUrl}${v1}/account?${q}`, { headers: { "X-MBX-APIKEY": readKey.apiKey, "content-type": "application/json" } })
      expect(r.status).toBe(200)
    })

    it("refuses a request from outside the key's IP allowlist with -1004", async () => {
      const k = await createKey(db.url, { scopes: ["read"], ipAllowlist: ["10.9.8.7"] })
      const r = await json(await signedGet(node.baseUrl, `${v1}/account`, k))
      expect(r).toEqual({ status: 403, body: { code: -1004, msg: "IP address is not in the API key's allowlist." } })
      const ok = await createKey(db.url, { scopes: ["read"], ipAllowlist: ["127.0.0.1"] })
      expect((await signedGet(node.baseUrl, `${v1}/account`, ok)).status).toBe(200)
    })

    it("never shows one key's account to another key", async () => {
      const other = await createKey(db.url, { scopes: ["read"] })
      const r = await json(await signedGet(node.baseUrl, `${v1}/account`, other))
      expect(r.body.uid).toBe(other.userId)
      expect(r.body.uid).not.toBe(readKey.userId)
      expect(r.body.addresses).toEqual([])
    })
  })

  describe("metrics and ops", () => {
    it("exposes Prometheus text with HTTP, entity, shard and timer metrics", async () => {
      await fetch(`${node.baseUrl}${v1}/ping`)
      await fetch(`${node.baseUrl}${v1}/no-such-route-${Date.now()}`)
      await new Promise((r) => setTimeout(r, 2500)) // one ops report interval
      const text = await (await fetch(`${node.baseUrl}/metrics`)).text()
      expect(text).toMatch(/^# TYPE shardline_http_requests_total counter$/m)
      expect(text).toMatch(/shardline_http_requests_total\{method="GET",route="\/api\/public\/v1\/ping",status="200",service="exchange"\} \d+/)
      expect(text).toMatch(/^shardline_http_request_duration_ms_bucket\{.*le="\+Inf"\} \d+$/m)
      expect(text).toMatch(/^effect_cluster_entities\{type="Authorization"\} \d+$/m)
      expect(text).toMatch(/^shardline_shards_owned 300$/m)
      expect(text).not.toMatch(/no-such-route/) // unknown paths never become label values
    })

    it("shows runners, shard owners, entities, timers and backlog in /ops", async () => {
      const view = (await (await fetch(`${node.baseUrl}/ops`)).json()) as Record<string, unknown>
      expect((view.runners as Array<unknown>).length).toBe(1)
      expect(view.shardOwners).toEqual([expect.objectContaining({ node: "shardline:embedded", shards: 300 })])
      // The pid shown is the node's own (this process: the node runs in it), not its Postgres
      // session's; nodes report it every 2 s.
      const owners = await eventually(async () => {
        const o = ((await (await fetch(`${node.baseUrl}/ops`)).json()) as OpsView).shardOwners
        return o[0]?.pid !== null ? o : undefined
      })
      expect(owners).toEqual([expect.objectContaining({ node: "shardline:embedded", pid: process.pid })])
      const sessions = await db.query("SELECT application_name FROM pg_stat_activity WHERE pid = $1", [owners[0]!.dbSessionPid])
      expect(sessions).toEqual([{ application_name: "shardline:embedded" }])
      expect(view).toHaveProperty("liveEntities")
      expect(view).toHaveProperty("pendingTimers.count")
      expect(view).toHaveProperty("unprocessedMessages.count")
    })
  })

  describe("ops token", () => {
    it("with SHARDLINE_OPS_TOKEN set, /ops and /metrics need it as a bearer token; the API does not", async () => {
      const guarded = await startNode(db.url, { SHARDLINE_OPS_TOKEN: "ops-token-for-the-test" })
      try {
        for (const path of ["/ops", "/metrics"]) {
          const missing = await fetch(`${guarded.baseUrl}${path}`)
          expect(missing.status).toBe(401)
          expect(missing.headers.get("www-authenticate")).toBe("Bearer")
          expect(await missing.json()).toEqual({ code: -2015, msg: "Ops endpoints need Authorization: Bearer <SHARDLINE_OPS_TOKEN>." })
          const wrong = await fetch(`${guarded.baseUrl}${path}`, { headers: { authorization: "Bearer ops-token-for-the-tesT" } })
          expect(wrong.status).toBe(401)
          expect(await wrong.json()).toEqual({ code: -2015, msg: "Invalid ops token." })
          const right = await fetch(`${guarded.baseUrl}${path}`, { headers: { authorization: "Bearer ops-token-for-the-test" } })
          expect(right.status).toBe(200)
        }
        expect((await fetch(`${guarded.baseUrl}${v1}/ping`)).status).toBe(200)
        expect((await fetch(`${node.baseUrl}/ops`)).status).toBe(200) // the node without a token stays open
      } finally {
        await guarded.stop()
      }
    })
  })

  describe("behind a trusted proxy", () => {
    it("takes the client IP from X-Forwarded-For only when SHARDLINE_TRUST_PROXY is on", async () => {
      const k = await createKey(db.url, { scopes: ["read"], ipAllowlist: ["203.0.113.7"] })
      const spoofed = await signedGet(node.baseUrl, `${v1}/account`, k, {}, { "X-Forwarded-For": "203.0.113.7" })
      expect(spoofed.status).toBe(403) // this node does not trust the header
      const proxied = await startNode(db.url, { SHARDLINE_TRUST_PROXY: "true" })
      try {
        const r = await signedGet(proxied.baseUrl, `${v1}/account`, k, {}, { "X-Forwarded-For": "10.0.0.1, 203.0.113.7" })
        expect(r.status).toBe(200)
      } finally {
        await proxied.stop()
      }
    })
  })

  describe("order endpoints need the trade scope", () => {
    const formPost = (key: Key, body: string, path = `${v1}/order`, method = "POST") =>
      fetch(`${node.baseUrl}${path}`, {
        method,
        headers: { "X-MBX-APIKEY": key.apiKey, "content-type": "application/x-www-form-urlencoded" },
        body: `${body}&signature=${sign(key.secretKey, body)}`
      })

    it("refuses POST and DELETE order with a read-only key (-2015, 401)", async () => {
      const body = `timestamp=${Date.now()}&symbol=BTCUSDT&side=BUY&price=1&quantity=1`
      const post = await formPost(readKey, body)
      expect(post.status).toBe(401)
      expect(((await post.json()) as { code: number }).code).toBe(-2015)
      const del = await fetch(`${node.baseUrl}/api/v3/order?${signedQuery(readKey, { symbol: "BTCUSDT", orderId: 1 })}`, {
        method: "DELETE", headers: { "X-MBX-APIKEY": readKey.apiKey }
      })
      expect(del.status).toBe(401)
    })

    it("lets a trade key through: a ccxt-style form body is verified, then the symbol is checked", async () => {
      const trader = await createKey(db.url, { scopes: ["read", "trade"] })
      const ok = await formPost(trader, `timestamp=${Date.now()}&symbol=NOPE_USDT&side=BUY&type=LIMIT&price=1&quantity=1`)
      expect(ok.status).toBe(400)
      expect(await ok.json()).toEqual({ code: -1121, msg: "Invalid symbol." })
      const missing = await formPost(trader, `timestamp=${Date.now()}&side=BUY&price=1&quantity=1`)
      expect(await missing.json()).toEqual({ code: -1102, msg: "Mandatory parameter 'symbol' was not sent, was empty/null, or malformed." })
      // connector style: everything in the query, JSON content type, empty body
      const q = signedQuery(trader, { symbol: "NOPEUSDT", side: "SELL", price: "2", quantity: "3" })
      const connector = await fetch(`${node.baseUrl}/api/v3/order?${q}`, {
        method: "POST", headers: { "X-MBX-APIKEY": trader.apiKey, "content-type": "application/json" }
      })
      expect(((await connector.json()) as { code: number }).code).toBe(-1121)
    })
  })
})
