// The Authorization entity end to end: the CLI grants through the cluster, the entity makes and
// seals a delegated key, the account shows it, and its durable timer destroys the key material.
// (test/integration/key-destruction.test.ts searches the database's files after expiry.)
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { payments } from "bitcoinjs-lib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Either, Redacted } from "effect"
import { ledgerParams } from "../../src/chain/params.ts"
import { pruneClusterMessages } from "../../src/platform/ops/NodeReporter.ts"
import { make as secretBox } from "../../src/platform/SecretBox.ts"
import { decodeState, delegatedKeysLabel, openWithState } from "../../src/exchange/authorization/keyEpochs.ts"
import { stateFileName } from "../../src/exchange/authorization/KeyEpochStore.ts"
import { cli } from "../support/cli.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { signedGet, type Key } from "../../harness/signed.ts"

const ECPair = ECPairFactory(ecc)
let db: TestDatabase
let node: RunningNode
let key: Key & { userId: number }
let env: Record<string, string>

beforeAll(async () => {
  process.env.SHARDLINE_KEY_EPOCH_MS = "1000" // read by the in-process node's key epoch store
  db = await createTestDatabase("authz")
  node = await startNode(db.url)
  key = await createKey(db.url, { scopes: ["read", "trade"] })
  env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
}, 90_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

interface Granted { grantId: string; asset: string; cap: string; expiresAt: number; delegatedAddress: string }
const account = async () => (await (await signedGet(node.baseUrl, "/api/public/v1/account", key)).json()) as {
  authorizations: Array<{ asset: string; cap: string; used: string; expiresAt: number; delegatedAddress: string }>
}

/** Opens a sealed delegated key with the node's key epoch file and the master key, as a node would. */
const openDelegated = (grantId: string, sealed: string) =>
  openWithState(
    Either.getOrThrow(decodeState(readFileSync(join(node.config.dataDir, stateFileName), "utf8"))),
    secretBox(Buffer.from(testMasterKey, "hex")).subkey(delegatedKeysLabel),
    grantId,
    sealed
  )
const sleepUntil = (atMs: number) => new Promise((r) => setTimeout(r, Math.max(0, atMs - Date.now())))

/** Every row of every table, as text, that contains the needle. */
const rowsContaining = async (needle: string) => {
  const tables = await db.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
  let hits = 0
  for (const { t } of tables) {
    const [row] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${t}" x WHERE x::text LIKE '%' || $1 || '%'`, [needle])
    hits += Number(row!.n)
  }
  return { hits, tables: tables.length }
}

describe("authorizations", () => {
  it("grants, shows the live authorization, and destroys the delegated key at expiry", async () => {
    const res = await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "BTC", "--cap", "0.25", "--expires-in", "4s", "--json"], env)
    expect(res.stderr).toBe("")
    expect(res.code).toBe(0)
    const granted = JSON.parse(res.stdout) as Granted
    expect(granted).toMatchObject({ asset: "BTC", cap: "0.25" })
    expect(granted.delegatedAddress).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{25,34}$/)

    const live = await account()
    expect(live.authorizations).toEqual([{ asset: "BTC", cap: "0.25", used: "0", reserved: "0", remaining: "0.25", expiresAt: granted.expiresAt, delegatedAddress: granted.delegatedAddress }])

    // The key is stored sealed, and it really is the delegated address's key.
    const [stored] = await db.query<{ key_enc: string }>("SELECT key_enc FROM authorization_keys WHERE grant_id = $1", [granted.grantId])
    const wif = Either.getOrThrow(openDelegated(granted.grantId, stored!.key_enc))
    expect(stored!.key_enc).not.toContain(wif)
    const pair = ECPair.fromWIF(wif, ledgerParams.network)
    expect(payments.p2pkh({ pubkey: pair.publicKey, network: ledgerParams.network }).address).toBe(granted.delegatedAddress)
    expect((await rowsContaining(wif)).hits).toBe(0) // never stored in the clear, not even in cluster messages

    // Within 2 s of its due time the timer has run: gone from the account and from every table.
    await new Promise((r) => setTimeout(r, Math.max(0, granted.expiresAt + 2000 - Date.now())))
    expect((await account()).authorizations).toEqual([])
    const [expired] = await db.query<{ lag_ms: number; n: string }>(
      `SELECT extract(epoch FROM (at - due_at)) * 1000 AS lag_ms, count(*) OVER ()::text AS n FROM authorization_events WHERE grant_id = $1 AND kind = 'expired'`,
      [granted.grantId]
    )
    expect(expired?.n).toBe("1")
    expect(Number(expired!.lag_ms)).toBeLessThan(2000)
    expect(Number(expired!.lag_ms)).toBeGreaterThanOrEqual(0)
    const sealedGone = await rowsContaining(stored!.key_enc)
    expect(sealedGone.tables).toBeGreaterThan(5)
    expect(sealedGone.hits).toBe(0)
    expect((await rowsContaining(wif)).hits).toBe(0)

    const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text()
    expect(metrics).toMatch(/^shardline_timer_lag_ms_count{type="Authorization"} [1-9]\d*$/m)
  })

  it("a new grant for the same asset replaces the old one and destroys its key", async () => {
    const first = JSON.parse((await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "ETH", "--cap", "2", "--expires-in", "1h", "--json"], env)).stdout) as Granted
    const second = JSON.parse((await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "ETH", "--cap", "3", "--expires-in", "2h", "--json"], env)).stdout) as Granted
    expect(second.delegatedAddress).not.toBe(first.delegatedAddress)
    expect((await account()).authorizations.map((a) => [a.asset, a.cap])).toEqual([["ETH", "3"]])
    expect(await db.query("SELECT 1 FROM authorization_keys WHERE grant_id = $1", [first.grantId])).toEqual([])
    // Each address got its fee coins when its grant was made (issue 22: not inside its first trade)...
    for (const g of [first, second]) {
      expect(await db.query("SELECT 1 FROM fee_sponsor_txs WHERE to_address = $1", [g.delegatedAddress]), g.grantId).toHaveLength(1)
    }
    // ...so the replaced one, which never traded, sends its fee coin back to the sponsor before its key goes.
    const events = await db.query<{ kind: string }>("SELECT kind FROM authorization_events WHERE grant_id = $1 ORDER BY id", [first.grantId])
    expect(events.map((e) => e.kind)).toEqual(["granted", "swept", "replaced"])
    const [sweep] = await db.query<{ amount: string; to_address: string }>("SELECT amount::text AS amount, to_address FROM authorization_sweeps WHERE grant_id = $1", [first.grantId])
    const [sponsor] = await db.query<{ to_address: string }>("SELECT address AS to_address FROM system_wallets WHERE name = 'fee-sponsor'")
    expect(sweep).toEqual({ amount: "0", to_address: sponsor!.to_address })
  })

  it("a replaced grant's stale timer fires and finds nothing: the new grant and its key survive", async () => {
    const grant = async (cap: string, expiresIn: string) => {
      const res = await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "SOL", "--cap", cap, "--expires-in", expiresIn, "--json"], env)
      expect(res.stderr).toBe("")
      return JSON.parse(res.stdout) as Granted
    }
    const a = await grant("1", "20s") // the CLI takes seconds on a busy machine: B must land before A is due
    const b = await grant("2", "1h")
    expect(Date.now()).toBeLessThan(a.expiresAt) // replaced before A was due
    // Past A's due time plus two storage polls: A's timer has been delivered and processed.
    await sleepUntil(a.expiresAt + 3000)
    const timers = await db.query<{ processed: boolean }>(
      "SELECT processed FROM cluster_messages WHERE message_id LIKE '%' || $1", [`expire:${a.grantId}`])
    expect(timers).toEqual([{ processed: true }])

    expect((await account()).authorizations.filter((x) => x.asset === "SOL")).toEqual([
      { asset: "SOL", cap: "2", used: "0", reserved: "0", remaining: "2", expiresAt: b.expiresAt, delegatedAddress: b.delegatedAddress }
    ])
    const [stored] = await db.query<{ key_enc: string }>("SELECT key_enc FROM authorization_keys WHERE grant_id = $1", [b.grantId])
    expect(stored).toBeDefined()
    const pair = ECPair.fromWIF(Either.getOrThrow(openDelegated(b.grantId, stored!.key_enc)), ledgerParams.network)
    expect(payments.p2pkh({ pubkey: pair.publicKey, network: ledgerParams.network }).address).toBe(b.delegatedAddress)
    const kinds = async (grantId: string) =>
      (await db.query<{ kind: string }>("SELECT kind FROM authorization_events WHERE grant_id = $1 ORDER BY id", [grantId])).map((e) => e.kind)
    expect(await kinds(a.grantId)).toEqual(["granted", "swept", "replaced"]) // its fee coin back to the sponsor
    expect(await kinds(b.grantId)).toEqual(["granted"])
  }, 120_000)

  it("refuses bad input with a clear message and exit code 2", async () => {
    const badCap = await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "BTC", "--cap=-1", "--expires-in", "1h"], env)
    expect(badCap.code).toBe(2)
    expect(badCap.stderr).toContain("invalid cap")
    const badKey = await cli(["authorizations", "grant", "--key", "nope", "--asset", "BTC", "--cap", "1", "--expires-in", "1h"], env)
    expect(badKey.code).toBe(2)
    expect(badKey.stderr).toContain("no active API key")
  })

  it("prunes processed cluster messages and their replies, never pending ones", async () => {
    const count = async () => (await db.query<{ processed: boolean; n: string }>(
      "SELECT processed, count(*)::text AS n FROM cluster_messages GROUP BY processed"))
      .reduce((acc, r) => ({ ...acc, [String(r.processed)]: Number(r.n) }), { true: 0, false: 0 } as Record<string, number>)
    const before = await count()
    expect(before.true).toBeGreaterThan(0)
    expect(before.false).toBeGreaterThan(0) // the 2 h ETH grant's expiry timer is pending
    const pruneOld = pruneClusterMessages(Duration.hours(1)).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(db.url) })))
    expect(await Effect.runPromise(pruneOld)).toBe(0) // nothing is an hour old
    const pruneAll = pruneClusterMessages(Duration.zero).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(db.url) })))
    expect(await Effect.runPromise(pruneAll)).toBeGreaterThan(before.true) // messages and their replies
    const after = await count()
    expect(after.true).toBe(0)
    expect(after.false).toBe(before.false)
    const [orphans] = await db.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM cluster_replies r WHERE NOT EXISTS (SELECT 1 FROM cluster_messages m WHERE m.request_id = r.request_id)")
    expect(orphans!.n).toBe("0")
  })
})
