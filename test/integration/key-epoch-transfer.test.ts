// A node without the key epoch ratchet gets it from a running node through Postgres, sealed to a
// one-time key: what one node sealed, the other opens; the request row is gone afterwards and
// never held the ratchet in a form the master key opens. When no running node answers while the
// database has a chain, a node refuses to start with one line instead of making a second chain.
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KeyEpochs, layer as keyEpochsLayer, stateFileName, transferWaitMs } from "../../src/exchange/authorization/KeyEpochStore.ts"
import { configLayer } from "../../src/config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"
import { NodeIdentity } from "../../src/platform/NodeIdentity.ts"
import { make as secretBox, SecretBox } from "../../src/platform/SecretBox.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { runNodeToExit } from "../../harness/nodeProcess.ts"
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
    Layer.provide(databaseLayer({ applicationName: `shardline:test-${name}`, url: Redacted.make(db.url), migrations })),
    Layer.provide(configLayer(configFrom({ SHARDLINE_DATA_DIR: dataDir, SHARDLINE_DATABASE_URL: db.url })))
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

  it("with no node left to answer, a node without the file refuses to start (one line) and makes no second chain", async () => {
    const [chain] = await db.query<{ chain_id: string }>("SELECT chain_id FROM key_epoch_chain")
    expect(await db.query("SELECT count(*)::int AS n FROM authorization_keys")).toEqual([{ n: 0 }])
    // Every node holding the chain stops (their answer loops with them).
    for (const s of scopes.splice(0)) await Effect.runPromise(Scope.close(s, Exit.void))
    const dataDir = mkdtempSync(join(tmpdir(), "sl-ke-c-"))
    const started = Date.now()
    const res = await runNodeToExit({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DATA_DIR: dataDir }, 90_000)
    expect(res.code).toBe(1)
    expect(Date.now() - started).toBeGreaterThanOrEqual(transferWaitMs) // it did wait for an answer
    const lines = res.output.split("\n").filter((l) => l.includes("Invalid data at SHARDLINE_DATA_DIR"))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`no running node handed over key epoch chain ${chain!.chain_id} (table key_epoch_chain) within 10 s`)
    expect(lines[0]).toContain("a second chain would leave the 0 sealed delegated keys (table authorization_keys) unreadable")
    // The refusal is the last thing said, with no stack trace under it (the node's other logs
    // before it are not this test's business: on a loaded machine the cluster logs its own).
    expect(res.output.slice(res.output.indexOf(lines[0]!)).trim()).toBe(lines[0]!.trim())
    // Nothing changed: the same chain, no ratchet file here, no request left behind.
    expect(await db.query("SELECT chain_id FROM key_epoch_chain")).toEqual([chain])
    expect(existsSync(join(dataDir, stateFileName))).toBe(false)
    expect(await db.query("SELECT id FROM key_epoch_transfers")).toEqual([])
  }, 120_000)
})
