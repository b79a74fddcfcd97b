// The per-node API key cache: a cached key is answered with no round trip (the table can be gone),
// unknown keys are remembered as absent for a short time, and a revocation reaches every node
// within 2 s: by NOTIFY at once, and by the poll when no notification arrives.
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testMasterKey } from "../../harness/config.ts"
import type { TestDatabase } from "../../harness/db.ts"
import { absentTtlMs, ApiKeys, type ApiKeysShape, type CacheOptions, make } from "../../src/exchange/auth/ApiKeys.ts"
import * as SecretBox from "../../src/platform/SecretBox.ts"
import { migratedTestDatabase, pgClientLayer, sleep, withTableRenamed, within } from "../support/pg.ts"

let db: TestDatabase
const runtimes: Array<{ dispose: () => Promise<void> }> = []

const startNode = async (name: string, options: CacheOptions): Promise<ApiKeysShape> => {
  const runtime = ManagedRuntime.make(Layer.scoped(ApiKeys, make(options)).pipe(
    Layer.provide(Layer.succeed(SecretBox.SecretBox, SecretBox.make(Buffer.from(testMasterKey, "hex")))),
    Layer.provide(pgClientLayer(db.url, `shardline:keys-${name}`))
  ))
  runtimes.push(runtime)
  return runtime.runPromise(ApiKeys)
}

const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)

const withoutApiKeysTable = (f: () => Promise<void>) => withTableRenamed(db, "api_keys", f)

let a: ApiKeysShape // LISTEN and the default 1 s poll, as in production
let listenOnly: ApiKeysShape // LISTEN, poll effectively off: only a notification can revoke here
let pollOnly: ApiKeysShape // no LISTEN: only the poll can revoke here

beforeAll(async () => {
  db = await migratedTestDatabase("keys")
  a = await startNode("a", { listen: true })
  listenOnly = await startNode("listen", { listen: true, revocationPollMs: 600_000 })
  pollOnly = await startNode("poll", { listen: false })
}, 60_000)
afterAll(async () => {
  for (const r of runtimes) await r.dispose()
  await db?.drop()
})

const unknownKey = () => "Z".repeat(60) + String(Math.floor(Math.random() * 9000) + 1000)

describe("API key cache", () => {
  it("answers a cached key from memory, with no round trip", async () => {
    const { apiKey, secretKey, userId } = await run(a.create({ scopes: ["read"] }))
    expect(a.peek(apiKey)).toBeUndefined() // created, but never looked up here
    const first = await run(a.lookup(apiKey))
    expect(Option.getOrThrow(first)).toMatchObject({ apiKey, secret: secretKey, userId, scopes: ["read"] })
    await withoutApiKeysTable(async () => {
      expect(Option.getOrThrow(await run(a.lookup(apiKey))).secret).toBe(secretKey)
      expect(Option.getOrThrow(a.peek(apiKey)!).userId).toBe(userId)
      // A key not in memory does need the table: the rename really cut the database off.
      const miss = await Effect.runPromiseExit(a.lookup(unknownKey()))
      expect(miss._tag).toBe("Failure")
    })
  })

  it("remembers an unknown key as absent for a short time only, and a create notification forgets it", async () => {
    const key = unknownKey()
    expect(Option.isNone(await run(a.lookup(key)))).toBe(true)
    await withoutApiKeysTable(async () => {
      expect(Option.isNone(await run(a.lookup(key)))).toBe(true)
    })
    expect(a.peek(key)).toEqual(Option.none())
    await sleep(absentTtlMs + 50)
    expect(a.peek(key)).toBeUndefined()
    expect(a.peek("not a key!")).toEqual(Option.none()) // malformed: cannot exist, never queried

    await run(a.lookup(key))
    expect(a.peek(key)).toEqual(Option.none())
    await db.query("SELECT pg_notify('shardline_api_keys', $1)", [`created:${key}`])
    await within(500, () => a.peek(key) === undefined)
  })

  it("a revocation on one node reaches a listening node at once, with no poll", async () => {
    const { apiKey } = await run(a.create({ scopes: ["read", "trade"] }))
    for (const node of [a, listenOnly, pollOnly]) expect(Option.isSome(await run(node.lookup(apiKey)))).toBe(true)
    const started = Date.now()
    expect(await run(a.revoke(apiKey))).toBe(true)
    expect(a.peek(apiKey)).toEqual(Option.none()) // the revoking node at once
    const viaNotify = await within(2000, () => Option.isOption(listenOnly.peek(apiKey)) && Option.isNone(listenOnly.peek(apiKey)!))
    const viaPoll = await within(2000, () => Option.isOption(pollOnly.peek(apiKey)) && Option.isNone(pollOnly.peek(apiKey)!))
    console.log(`revocation seen: by NOTIFY after ${viaNotify} ms, by the poll alone after ${Date.now() - started} ms`)
    expect(viaNotify).toBeLessThan(500)
    expect(viaPoll).toBeLessThan(2000)
    expect(Option.isNone(await run(listenOnly.lookup(apiKey)))).toBe(true)
    expect(await run(a.revoke(apiKey))).toBe(false) // already revoked
  })

  it("a revocation with no notification at all (plain SQL) reaches every polling node within 2 s", async () => {
    const { apiKey } = await run(a.create({ scopes: ["read"] }))
    for (const node of [a, pollOnly]) expect(Option.isSome(await run(node.lookup(apiKey)))).toBe(true)
    await db.query("UPDATE api_keys SET revoked_at = now() WHERE api_key = $1", [apiKey])
    const tookMs = await within(2000, () => a.peek(apiKey) !== undefined && Option.isNone(a.peek(apiKey)!) && Option.isNone(pollOnly.peek(apiKey)!))
    console.log(`revocation without NOTIFY seen by both polling nodes after ${tookMs} ms`)
    expect(tookMs).toBeLessThan(2000)
  })
})
