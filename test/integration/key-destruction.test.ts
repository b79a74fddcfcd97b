// Key destruction that holds: after a grant's expiry epoch has ended and a CHECKPOINT, nothing
// the database keeps (the heap of every relation of the database, every WAL segment) nor a copy
// of the rows taken before expiry (a backup) gives back the delegated key, even with the master
// key and the node's current key epoch file. The sealed bytes ARE still in the WAL (the test
// checks it finds them, so the search is real): what is gone is the epoch key that opens them.
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { payments } from "bitcoinjs-lib"
import { Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ledgerParams } from "../../src/chain/params.ts"
import { decodeState, delegatedKeysLabel, epochEndMs, epochOf, openWithState, type EpochState } from "../../src/exchange/authorization/keyEpochs.ts"
import { keyDestroyedWithinMs, stateFileName } from "../../src/exchange/authorization/KeyEpochStore.ts"
import { make as secretBox } from "../../src/platform/SecretBox.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { cli } from "../support/cli.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"

const ECPair = ECPairFactory(ecc)
const periodMs = 1000
/** The sweep grace (SHARDLINE_SWEEP_GRACE_MS): a key is sealed under the epoch of expiry + grace. */
const graceMs = 2000
let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  process.env.SHARDLINE_KEY_EPOCH_MS = String(periodMs) // read by the in-process node's key epoch store
  db = await createTestDatabase("keydestroy")
  node = await startNode(db.url, { SHARDLINE_SWEEP_GRACE_MS: String(graceMs) })
}, 90_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const masterSubkey = secretBox(Buffer.from(testMasterKey, "hex")).subkey(delegatedKeysLabel)
const stateFile = () => join(node.config.dataDir, stateFileName)
const currentState = (): EpochState => Either.getOrThrow(decodeState(readFileSync(stateFile(), "utf8")))

/** The files Postgres keeps for this database (every relation) and for the whole server (WAL). */
const databaseFiles = async () => {
  await db.query("CHECKPOINT")
  const [{ dir }] = (await db.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir")) as [{ dir: string }]
  const [{ oid }] = (await db.query<{ oid: string }>("SELECT oid::text AS oid FROM pg_database WHERE datname = current_database()")) as [{ oid: string }]
  const heapDir = join(dir, "base", oid)
  const heap = readdirSync(heapDir).map((f) => join(heapDir, f)).filter((f) => statSync(f).isFile())
  const wal = (await db.query<{ name: string }>("SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'"))
    .map((r) => join(dir, "pg_wal", r.name))
  const [{ keys }] = (await db.query<{ keys: string }>("SELECT pg_relation_filepath('authorization_keys') AS keys")) as [{ keys: string }]
  return { heap, wal, keysHeap: join(dir, keys) }
}

const filesContaining = (files: ReadonlyArray<string>, needle: Buffer) =>
  files.filter((f) => readFileSync(f).includes(needle))

/** Every sealed delegated key of this grant's epoch found in the files, as text. */
/** `authorizations show <grantId> --json`, as a user runs it. */
const shown = async (grantId: string, env: Record<string, string>) => {
  const res = await cli(["authorizations", "show", grantId, "--json"], env)
  expect(res.stderr).toBe("")
  return JSON.parse(res.stdout) as { status: string; keyDestroyedAt: string | null }
}

const sealedCopiesIn = (files: ReadonlyArray<string>, epoch: number) => {
  const re = new RegExp(`e1:${epoch}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+`, "g")
  const found = new Set<string>()
  for (const f of files) for (const m of readFileSync(f).toString("latin1").matchAll(re)) found.add(m[0])
  return [...found]
}

describe("key destruction", () => {
  it("after the expiry epoch, neither the heap, the WAL nor a pre-expiry copy of the row opens with the master key", async () => {
    const key = await createKey(db.url, { scopes: ["read", "trade"] })
    const env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
    const res = await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "BTC", "--cap", "1", "--expires-in", "15s", "--json"], env) // seconds of CLI start on a busy machine
    expect(res.stderr).toBe("")
    const granted = JSON.parse(res.stdout) as { grantId: string; expiresAt: number; delegatedAddress: string }
    const epoch = epochOf(periodMs, granted.expiresAt + graceMs)

    // Before expiry: the "backup" (a copy of the row) opens with the master key and the node's
    // current ratchet, and is the delegated address's key. This is what must stop working.
    const [backup] = await db.query<{ key_enc: string }>("SELECT key_enc FROM authorization_keys WHERE grant_id = $1", [granted.grantId])
    expect(backup!.key_enc.startsWith(`e1:${epoch}:`)).toBe(true)
    const before = currentState()
    expect(before.epoch).toBeLessThan(epoch)
    const wif = Either.getOrThrow(openWithState(before, masterSubkey, granted.grantId, backup!.key_enc))
    const pair = ECPair.fromWIF(wif, ledgerParams.network)
    expect(payments.p2pkh({ pubkey: pair.publicKey, network: ledgerParams.network }).address).toBe(granted.delegatedAddress)
    const secrets = [Buffer.from(wif), Buffer.from(pair.privateKey!), Buffer.from(pair.privateKey!.toString("hex")), Buffer.from(pair.privateKey!.toString("base64"))]
    // The search is real: the sealed row is in the table's heap file once checkpointed.
    const live = await databaseFiles()
    expect(filesContaining([live.keysHeap], Buffer.from(backup!.key_enc))).toEqual([live.keysHeap])
    // Not destroyed yet, and `authorizations show` says nothing of it.
    expect(await shown(granted.grantId, env)).toMatchObject({ status: "granted", keyDestroyedAt: null })

    // The window, measured: from the expiry on, how long the backup still opens with the node's
    // ratchet file as it is on disk (read every 20 ms).
    await new Promise((r) => setTimeout(r, Math.max(0, granted.expiresAt - Date.now())))
    let unrecoverableAt = 0
    while (unrecoverableAt === 0) {
      if (Either.isLeft(openWithState(currentState(), masterSubkey, granted.grantId, backup!.key_enc))) unrecoverableAt = Date.now()
      else await new Promise((r) => setTimeout(r, 20))
    }
    // Sealed under the epoch of expiry + grace: destroyed at that epoch's end (plus the ratchet's
    // 5 ms and this poll), never before the grace is over, at most grace + one epoch after expiry.
    expect(unrecoverableAt - granted.expiresAt).toBeGreaterThanOrEqual(graceMs)
    expect(unrecoverableAt - granted.expiresAt).toBeLessThanOrEqual(keyDestroyedWithinMs(periodMs, graceMs) + 200)
    expect(unrecoverableAt).toBeGreaterThanOrEqual(epochEndMs(periodMs, epoch))

    // Past the end of the epoch of expiry + grace, plus the timer's poll and the ratchet tick.
    await new Promise((r) => setTimeout(r, Math.max(0, (epoch + 1) * periodMs + 3000 - Date.now())))
    // Now `authorizations show` says when: the end of the sealing epoch, at most grace + one epoch
    // (here 3 s; 90 s with the defaults, test/unit/exchange/keyEpochs.test.ts) after expiry.
    const after0 = await shown(granted.grantId, env)
    expect(after0).toMatchObject({ status: "expired", keyDestroyedAt: new Date(epochEndMs(periodMs, epoch)).toISOString() })
    const destroyedAt = Date.parse(after0.keyDestroyedAt!)
    expect(destroyedAt - granted.expiresAt).toBeGreaterThanOrEqual(graceMs)
    expect(destroyedAt - granted.expiresAt).toBeLessThanOrEqual(Math.min(120_000, keyDestroyedWithinMs(periodMs, graceMs)))
    expect(Math.abs(destroyedAt - unrecoverableAt)).toBeLessThan(250)
    expect(await db.query("SELECT 1 FROM authorization_keys WHERE grant_id = $1", [granted.grantId])).toEqual([])
    const after = currentState()
    expect(after.chainId).toBe(before.chainId)
    expect(after.epoch).toBeGreaterThan(epoch)

    const files = await databaseFiles()
    const all = [...files.heap, ...files.wal]
    expect(files.wal.length).toBeGreaterThan(0)
    // The sealed bytes outlive the DELETE in the WAL (and maybe the heap): no rewrite can scrub those.
    const copies = sealedCopiesIn(all, epoch)
    expect(copies).toContain(backup!.key_enc)
    // No form of the key itself, anywhere: not the WIF, not the raw, hex or base64 private key.
    for (const s of secrets) expect(filesContaining(all, s)).toEqual([])
    // And nothing sealed opens any more: not the backup, not any copy in the files, master key or not.
    for (const sealed of [backup!.key_enc, ...copies]) {
      const opened = openWithState(after, masterSubkey, granted.grantId, sealed)
      expect(Either.isLeft(opened) && opened.left.message).toBe(`the key of epoch ${epoch} is destroyed (this node is at epoch ${after.epoch})`)
    }
    // The ratchet file itself no longer holds the old state's key (it was rewritten in place).
    expect(readFileSync(stateFile()).includes(Buffer.from(before.key.toString("hex")))).toBe(false)
    // The residual, stated in docs/runtime.md: a copy of the ratchet FILE from before the end of
    // the epoch still opens it. That file is outside Postgres and must never be backed up.
    expect(Either.getOrThrow(openWithState(before, masterSubkey, granted.grantId, backup!.key_enc))).toBe(wif)
  }, 120_000)
})
