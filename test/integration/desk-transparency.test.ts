// The desk's reserves, attestations and public endpoints on a devnet node: vault balances paid
// on BTC and the EVM chains and a dollar token granted by the desk issuer show up in an
// attestation made with `desk attest`; the endpoints answer with CORS * and a Cache-Control age
// inside 15–120 s; `desk verify --url` checks the whole series from the public endpoints; bad
// input is a 4xx in the desk's error shape; the attestation table refuses UPDATE, DELETE and
// TRUNCATE through the app's own connection.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { Attestor, attestorId, Tick } from "../../schemas/desk/attestor.ts"
import { configLayer } from "../../src/config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"
import { storageClient } from "../../src/platform/ShardingSettings.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { devnetFaucet } from "../../src/chain/ledger/devnetFaucet.ts"
import { type AttestationPoint, verifySeries } from "../../src/desk/attestation/attestation.ts"
import { DeskWallets } from "../../src/desk/wallets/DeskWallets.ts"
import { deskIssuerWallet } from "../../src/platform/devnet/DevnetChains.ts"
import { systemWallet } from "../../src/platform/ledger/SystemWallet.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { cli, cliJson } from "../support/cli.ts"
import { cliEnvOf, startNode, type RunningNode } from "../support/node.ts"
import { runWithDb } from "../support/services.ts"
import { clearOfTopOfHour } from "../support/clockHour.ts"

let db: TestDatabase
let node: RunningNode
let env: Record<string, string>

beforeAll(async () => {
  // The file counts attestations; the hourly tick would add one if the run crossed the hour. The
  // whole file takes about a minute on a quiet box; 3 minutes leaves room for a loaded one.
  await clearOfTopOfHour(180_000)
  db = await createTestDatabase("desktransp")
  node = await startNode(db.url, { SHARDLINE_DEVNET_BLOCK_MS: "0" })
  env = cliEnvOf(db.url, node)
}, 300_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const get = async (path: string, init?: RequestInit) => {
  const r = await fetch(`${node.deskUrl}${path}`, init)
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, any> }
}

const pay = async (chain: string, to: string, amount: string, asset?: string) =>
  cliJson(await cli(["devnet", "pay", "--chain", chain, "--to", to, `--amount=${amount}`, ...(asset === undefined ? [] : ["--asset", asset]), "--json"], env))

describe("desk transparency", () => {
  it("the first attestation is made by itself at start; the series is hash-chained and signed", { timeout: 240_000 }, async () => {
    // The Attestor's start kick finds no attestation and attests at once.
    const deadline = Date.now() + 60_000
    while ((await db.query("SELECT count(*)::int AS n FROM desk_attestations"))[0]!["n"] === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500))
    const [first] = await db.query<{ seq: string; prev_hash: string | null }>("SELECT seq::text AS seq, prev_hash FROM desk_attestations ORDER BY seq")
    expect(first).toEqual({ seq: "1", prev_hash: null })
    // The next tick is scheduled right after the row is written (the start kick's own schedule,
    // due at once, is what a read in between sees): wait for it.
    const scheduleOf = async () => (await db.query<{ tick_n: string; due_at_ms: string }>("SELECT tick_n::text AS tick_n, due_at_ms::text AS due_at_ms FROM desk_attestor"))[0]
    let schedule = await scheduleOf()
    for (let i = 0; i < 100 && (schedule === undefined || Number(schedule.due_at_ms) <= Date.now()); i++) {
      await new Promise((r) => setTimeout(r, 100))
      schedule = await scheduleOf()
    }
    // The next tick is due at the next top of the hour.
    expect(Number(schedule!.due_at_ms) % 3_600_000).toBe(0)
    expect(Number(schedule!.due_at_ms)).toBeGreaterThan(Date.now())
  })

  it("reserves and supply follow the vaults and the issuer's grants; every endpoint answers from public data", { timeout: 240_000 }, async () => {
    const vaults = await node.run(Effect.map(DeskWallets, (w) => w.vaults))
    const vault = (chain: string, group: string) => vaults.find((v) => v.chain === chain && v.group === group)!.address
    await pay("ethereum", vault("ethereum", "cold"), "2.5", "USDC")
    await pay("bsc", vault("bsc", "hot"), "1.25", "USDC") // 18 decimals on bsc
    await pay("base", vault("base", "cold"), "0.75", "DAI")
    await pay("btc", vault("btc", "cold"), "0.5")
    await pay("ltc", vault("ltc", "hot"), "3")
    await cli(["devnet", "mine", "--chain", "btc", "--json"], env)
    await cli(["devnet", "mine", "--chain", "ltc", "--json"], env)
    // The desk issuer grants 4 SUSD and 0.25 wBTC to a customer: that is what circulates.
    const issuer = await runWithDb(db.url, systemWallet(deskIssuerWallet))
    await node.run(Effect.gen(function*() {
      const ledger = yield* UtxoLedger
      const faucet = devnetFaucet(ledger)
      const wallet = makeKeyWallet(ledger, issuer.privateKey)
      const customer = faucet.address
      yield* ledger.mine(1, faucet.address)
      yield* wallet.omni({ type: "grant", property: 6, amount: 400_000_000n, memo: "" }, customer)
      yield* ledger.mine(1, faucet.address)
      yield* wallet.omni({ type: "grant", property: 8, amount: 25_000_000n, memo: "" }, customer)
      yield* ledger.mine(1, faucet.address)
    }))

    const attested = cliJson<Record<string, unknown>>(await cli(["desk", "attest", "--json"], env))
    expect(attested).toMatchObject({ seq: 2, payload_hash: expect.stringMatching(/^[0-9a-f]{64}$/), signature: expect.stringMatching(/^[0-9a-f]{64}$/) })

    const reserves = await get("/api/public/reserves")
    expect(reserves.status).toBe(200)
    expect(reserves.headers.get("access-control-allow-origin")).toBe("*")
    const maxAge = Number(/max-age=(\d+)/.exec(reserves.headers.get("cache-control") ?? "")?.[1])
    expect(maxAge).toBeGreaterThanOrEqual(15)
    expect(maxAge).toBeLessThanOrEqual(120)
    expect(reserves.body["source"]).toBe("attestation")
    // The next read comes from the node-local cache in the fast lane: the same bytes and headers.
    const again = await get("/api/public/reserves")
    expect(again.body).toEqual(reserves.body)
    expect([again.headers.get("access-control-allow-origin"), again.headers.get("cache-control")]).toEqual(["*", reserves.headers.get("cache-control")])
    expect(reserves.body["attestation"]).toMatchObject({ seq: 2, payload_hash: attested["payload_hash"] })
    const r = reserves.body["reserves"]
    expect(r).toMatchObject({
      totalReserves: "4.5",
      circulatingSupply: "4",
      collateralization: 1.125,
      coldHot: { cold: "3.25", hot: "1.25", deposits: "0" },
      dollarTokens: [{ asset: "SUSD", propertyId: 6, circulatingSupply: "4" }, { asset: "XUSD", propertyId: 7, circulatingSupply: "0" }]
    })
    expect(r.breakdown.byChain.bsc.USDC).toBe("1.25")
    expect(r.breakdown.byChain.base.DAI).toBe("0.75")
    expect(r.breakdown.byToken).toMatchObject({ BTC: "0.5", LTC: "3", USDC: "3.75", DAI: "0.75", ETH: "0" })
    expect(r.breakdown.hotByChain.ltc).toEqual({ LTC: "3" })
    expect(r.wrapped.find((w: any) => w.wrapped === "wBTC")).toEqual({ asset: "BTC", wrapped: "wBTC", propertyId: 8, reserves: "0.5", wrappedSupply: "0.25", collateralization: 2 })

    const supply = await get("/api/public/supply")
    expect(supply.body["tokens"].find((t: any) => t.symbol === "SUSD")).toEqual({
      symbol: "SUSD", chain: "token ledger (Omni Layer)", propertyId: 6, circulatingSupply: "4", backingAssets: ["USDC", "USDT", "PYUSD", "DAI"], reserves: "4.5", collateralization: 1.125
    })
    const status = await get("/api/public/status")
    expect(status.body).toMatchObject({
      service: "token-desk", attestationCadence: "hourly", redemptionQueueDepth: 0,
      attestationPublicKey: expect.stringMatching(/^[0-9a-f]{64}$/), lastAttestationAt: expect.any(String)
    })
    expect(status.body["pegHealth"][0]).toEqual({ asset: "USD", collateralization: 1.125, healthy: true })
    expect(status.body["instantRedemptionCapacity"]["bsc"]).toMatchObject({ USDC: "1.25" })
    expect(status.body["heartbeats"].map((h: any) => h.job)).toEqual(["attestor", "reserves-scan", "omni-view"])
    const stables = await get("/api/public/v1/stables/assets")
    expect(stables.headers.get("access-control-allow-origin")).toBe("*")
    expect(stables.body["assets"][0]).toMatchObject({ asset: "SUSD", propertyId: 6, mintFeeBps: 0, redeemFeeBps: 10, minAmount: "10", circulatingSupply: "4", live: true, acceptedDeposits: ["USDC", "USDT", "PYUSD", "DAI"] })
    const wrap = await get("/api/public/v1/wrap/assets")
    expect(wrap.body["assets"].map((a: any) => [a.asset, a.wrapped, a.requiredConfirmations])).toEqual([["BTC", "wBTC", 2], ["ETH", "wETH", 12], ["LTC", "wLTC", 6]])
    expect(wrap.body["assets"][2]).toMatchObject({ reserves: "3", wrappedSupply: "0", collateralization: null, live: true, wrapFeeBps: 10 })

    // The history and the verifier, from the public endpoints alone.
    const history = await get("/api/public/reserves/history?range=all")
    const points = history.body["points"] as Array<AttestationPoint>
    expect(points.map((p) => p.seq)).toEqual([1, 2])
    expect(verifySeries(points, { publicKey: status.body["attestationPublicKey"], nowMs: Date.now() }).problems).toEqual([])
    expect((await get("/api/public/reserves/history")).body["range"]).toBe("24h")
    const verified = await cli(["desk", "verify", "--url", node.deskUrl, "--json"], {})
    expect(verified.code).toBe(0)
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, rows: 2, problems: [], missingHours: [], hmacChecked: false })
    // The HMAC key is the issuer's own (sealed in desk_secrets); the operator's audit with it passes, a wrong key does not.
    const hmacKey = await runWithDb(db.url, Effect.gen(function*() {
      const { deskSecret } = yield* Effect.promise(() => import("../../src/desk/wallets/DeskSecrets.ts"))
      return (yield* deskSecret("attestation-hmac", () => ({ secret: "unused", public: "" }))).secret
    }))
    expect((await cli(["desk", "verify", "--url", node.deskUrl, "--hmac-key", hmacKey, "--json"], {})).code).toBe(0)
    const wrongKey = await cli(["desk", "verify", "--url", node.deskUrl, "--hmac-key", "nope", "--json"], {})
    expect(wrongKey.code).toBe(1)
    expect(JSON.parse(wrongKey.stdout).problems).toHaveLength(2)
  })

  it("bad input: unknown range, unknown paths and other methods are 4xx in the desk's error shape", { timeout: 60_000 }, async () => {
    const range = await get("/api/public/reserves/history?range=1y")
    expect(range.status).toBe(400)
    expect(range.body).toEqual({ error: { code: "invalid_parameter", message: expect.stringMatching(/^Parameter 'range' is invalid/) } })
    const unknown = await get("/api/public/reserves/nope")
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual({ error: { code: "not_found", message: "No such route." } })
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const r = await fetch(`${node.deskUrl}/api/public/reserves`, { method })
      expect(r.status).toBeGreaterThanOrEqual(400)
      expect(r.status).toBeLessThan(500)
      expect(((await r.json()) as any).error.code).toMatch(/^[a-z_]+$/)
    }
    expect((await cli(["desk", "verify", "--url", "ftp://x"], {})).code).toBe(1)
  })

  it("the hourly timer is a persisted DeliverAt message; a stale tick does nothing, the expected one attests and schedules the next", { timeout: 120_000 }, async () => {
    const [schedule] = await db.query<{ tick_n: string; due_at_ms: string }>("SELECT tick_n::text AS tick_n, due_at_ms::text AS due_at_ms FROM desk_attestor")
    const n = Number(schedule!.tick_n)
    // The pending tick waits in cluster storage (it survives the runner) for the top of the hour.
    const pending = await db.query<{ deliver_at: string; processed: boolean }>(
      "SELECT deliver_at::text AS deliver_at, processed FROM cluster_messages WHERE entity_type = 'Attestor' AND tag = 'Tick' AND message_id LIKE $1", [`%tick:${n}:%`])
    expect(pending).toEqual([{ deliver_at: schedule!.due_at_ms, processed: false }])
    const client = storageClient(node.config).pipe(
      Layer.provideMerge(databaseLayer({ applicationName: "test:attestor", migrations })),
      Layer.provide(configLayer(node.config))
    )
    const tick = (k: number, dueAtMs = Date.now()) =>
      Effect.runPromise(Effect.scoped(Effect.provide(Effect.flatMap(Attestor.client, (c) => c(attestorId).Tick(new Tick({ n: k, dueAtMs }))), client)))
    const rows = async () => Number((await db.query("SELECT count(*)::int AS n FROM desk_attestations"))[0]!["n"])
    const before = await rows()
    await tick(n - 1)
    expect(await rows()).toBe(before)
    const dueAtMs = Date.now()
    await tick(n, dueAtMs)
    expect(await rows()).toBe(before + 1)
    // The tick again, as after a crash between its attestation and its schedule write: the
    // schedule row still expects it, and the cluster delivers it once more (a message that was
    // never marked processed; an exact resend of a processed one the cluster answers itself, so
    // this one is due at the attestation's own time). No second row for that hour.
    const [made] = await db.query<{ at: string }>("SELECT (extract(epoch FROM attested_at) * 1000)::bigint::text AS at FROM desk_attestations ORDER BY seq DESC LIMIT 1")
    expect(Number(made!.at)).toBeGreaterThanOrEqual(dueAtMs)
    await db.query("UPDATE desk_attestor SET tick_n = $1", [n])
    await tick(n, Number(made!.at))
    expect(await rows()).toBe(before + 1)
    const [next] = await db.query<{ tick_n: string; due_at_ms: string }>("SELECT tick_n::text AS tick_n, due_at_ms::text AS due_at_ms FROM desk_attestor")
    expect(Number(next!.tick_n)).toBe(n + 1)
    expect(Number(next!.due_at_ms) % 3_600_000).toBe(0)
    const [heartbeat] = await db.query<{ detail: string }>("SELECT detail FROM desk_heartbeats WHERE job = 'attestor'")
    expect(heartbeat!.detail).toMatch(new RegExp(`^attestation ${before + 1} `))
  })

  it("an attestation row cannot be changed or removed, even through the app's own connection", { timeout: 60_000 }, async () => {
    const attempt = (statement: string) =>
      runWithDb(db.url, Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.either(sql.unsafe(statement))))
    for (const statement of [
      "UPDATE desk_attestations SET signature = repeat('0', 64) WHERE seq = 1",
      "DELETE FROM desk_attestations WHERE seq = 1",
      "TRUNCATE desk_attestations"
    ]) {
      const r = await attempt(statement)
      expect(r._tag).toBe("Left")
      expect(String((r as any).left?.cause?.message ?? (r as any).left)).toMatch(/desk_attestations is append-only: (UPDATE|DELETE|TRUNCATE) refused/)
    }
    expect((await db.query("SELECT count(*)::int AS n FROM desk_attestations"))[0]).toEqual({ n: 3 })
  })
})
