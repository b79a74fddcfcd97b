// A node without the key epoch ratchet gets it from a running node through Postgres, sealed to a
// one-time key: what one node sealed, the other opens; the request row is gone afterwards and
// never held the ratchet in a form the master key opens.
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KeyEpochs, layer as keyEpochsLayer, stateFileName } from "../../src/exchange/authorization/KeyEpochStore.ts"
import { AppConfig } from "../../src/platform/Config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { NodeIdentity } from "../../src/platform/NodeIdentity.ts"
import { make as secretBox, SecretBox } from "../../src/platform/SecretBox.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { configFrom, testMasterKey } from "../support/node.ts"

let db: TestDatabase
const scopes: Array<Scope.CloseableScope> = []

beforeAll(async () => {
  db = await createTestDatabase("keytransfer")
}, 60_000)
afterAll(async () => {
  for (const s of scopes) await Effect.runPromise(Scope.close(s, Exit.void))
  await db?.drop()
})

/** One node's key epoch store, with its own data dir, against the shared database. */
const store = async (name: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), `sl-ke-${name}-`))
  const layer = keyEpochsLayer.pipe(
    Layer.provide(Layer.succeed(SecretBox, secretBox(Buffer.from(testMasterKey, "hex")))),
    Layer.provide(Layer.succeed(NodeIdentity, { name: `test:${name}` })),
    Layer.provide(databaseLayer({ applicationName: `shardline:test-${name}`, url: Redacted.make(db.url) })),
    Layer.provide(Layer.succeed(AppConfig, configFrom({ SHARDLINE_DATA_DIR: dataDir, SHARDLINE_DATABASE_URL: db.url })))
  )
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return { dataDir, keys: Effect.runSync(Effect.provide(KeyEpochs, context)) }
}

describe("key epoch transfer", () => {
  it("a second node gets the first node's chain and opens what the first sealed", async () => {
    const a = await store("a")
    const [chain] = await db.query<{ chain_id: string }>("SELECT chain_id FROM key_epoch_chain")
    expect(readFileSync(join(a.dataDir, stateFileName), "utf8")).toContain(chain!.chain_id)
    const sealed = await Effect.runPromise(a.keys.seal("grant-1", Date.now() + 3_600_000, "the-wif"))

    const started = Date.now()
    const b = await store("b")
    expect(Date.now() - started).toBeLessThan(8_000) // answered, not timed out into a new chain
    expect(readFileSync(join(b.dataDir, stateFileName), "utf8")).toContain(chain!.chain_id)
    expect(await Effect.runPromise(b.keys.open("grant-1", sealed))).toBe("the-wif")
    expect(await Effect.runPromise(Effect.either(b.keys.open("grant-2", sealed)))).toMatchObject({ _tag: "Left" }) // bound to the grant
    expect(await db.query("SELECT id FROM key_epoch_transfers")).toEqual([])
    expect(await db.query("SELECT chain_id FROM key_epoch_chain")).toEqual([chain])
    expect(existsSync(join(b.dataDir, "master.key"))).toBe(false)
  }, 60_000)
})
