// The system wallets ('asset-issuer', 'fee-sponsor'): made once, sealed, the same key for every
// caller, also when several nodes ask at the same moment.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import { keyWalletAddress } from "../../src/chain/ledger/keyWallet.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { configLayer } from "../../src/config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"
import { systemWallet } from "../../src/platform/ledger/SystemWallet.ts"
import { make as secretBox, SecretBox } from "../../src/platform/SecretBox.ts"
import { configFrom, testMasterKey } from "../../harness/config.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase("syswallet")
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | SecretBox>) => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey })
  const layer = databaseLayer({ applicationName: "test:system-wallet", url: Redacted.make(db.url), migrations }).pipe(
    Layer.merge(Layer.succeed(SecretBox, secretBox(Buffer.from(testMasterKey, "hex")))),
    Layer.provide(configLayer(config))
  )
  return Effect.runPromise(Effect.provide(effect, layer))
}

describe("systemWallet", () => {
  it("makes one sealed key per name, shared by concurrent callers", async () => {
    const wallets = await run(Effect.all([...Array(8)].map(() => systemWallet("asset-issuer")), { concurrency: "unbounded" }))
    expect(new Set(wallets.map((w) => w.address)).size).toBe(1)
    const [issuer] = wallets
    expect(keyWalletAddress(issuer!.privateKey, ledgerParams)).toBe(issuer!.address)
    const sponsor = await run(systemWallet("fee-sponsor"))
    expect(sponsor.address).not.toBe(issuer!.address)
    const rows = await db.query<{ name: string; address: string; key_enc: string }>("SELECT name, address, key_enc FROM system_wallets ORDER BY name")
    expect(rows.map((r) => r.name)).toEqual(["asset-issuer", "fee-sponsor"])
    // Sealed: the private key is nowhere in the row.
    expect(rows[0]!.key_enc).toMatch(/^v1:/)
    expect(rows[0]!.key_enc).not.toContain(Buffer.from(issuer!.privateKey).toString("hex"))
    // A later call (another process) opens the same key.
    expect((await run(systemWallet("asset-issuer"))).privateKey).toEqual(issuer!.privateKey)
  })

  it("dies on a name that is not lowercase-dashed", async () => {
    await expect(run(systemWallet("Fee Sponsor"))).rejects.toThrow(/lowercase-dashed/)
  })
})
