// API keys: created by the CLI, read on every signed request. The secret is needed to check an
// HMAC, so it is stored encrypted (not hashed) and decrypted into a short-lived per-node cache.
import { randomInt } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { SecretBox } from "../../platform/SecretBox.ts"

export type Scope = "read" | "trade"
export const allScopes: ReadonlyArray<Scope> = ["read", "trade"]

export interface ApiKeyRecord {
  readonly apiKey: string
  readonly userId: number
  readonly secret: string
  readonly scopes: ReadonlyArray<Scope>
  readonly ipAllowlist: ReadonlyArray<string>
}

export interface ApiKeyListing {
  readonly apiKey: string
  readonly userId: number
  readonly scopes: ReadonlyArray<Scope>
  readonly ipAllowlist: ReadonlyArray<string>
  readonly createdAt: string
  readonly revokedAt: string | null
}

/** How long a node trusts its cached copy of a key; bounds how late a revocation takes effect. */
export const cacheTtlMs = 2000
const cacheEntriesMax = 10_000

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
/** 64 characters of base62, like Binance keys; randomInt is uniform (no modulo bias). */
const token = () => Array.from({ length: 64 }, () => alphabet[randomInt(alphabet.length)]).join("")

export interface ApiKeysShape {
  readonly create: (options: {
    readonly userId?: number
    readonly scopes: ReadonlyArray<Scope>
    readonly ipAllowlist?: ReadonlyArray<string>
    readonly addresses?: ReadonlyArray<string>
    readonly label?: string
  }) => Effect.Effect<{ apiKey: string; secretKey: string; userId: number }>
  readonly list: Effect.Effect<ReadonlyArray<ApiKeyListing>>
  readonly revoke: (apiKey: string) => Effect.Effect<boolean>
  /** A live (not revoked) key, or none. */
  readonly lookup: (apiKey: string) => Effect.Effect<Option.Option<ApiKeyRecord>>
  /** Synchronous: the cached answer for a key, or undefined when it is not cached. */
  readonly peek: (apiKey: string) => Option.Option<ApiKeyRecord> | undefined
}

export class ApiKeys extends Context.Tag("shardline/ApiKeys")<ApiKeys, ApiKeysShape>() {}

interface Row {
  readonly api_key: string
  readonly user_id: string
  readonly secret_enc: string
  readonly scopes: ReadonlyArray<string>
  readonly ip_allowlist: ReadonlyArray<string>
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  const cache = new Map<string, { at: number; value: Option.Option<ApiKeyRecord> }>()

  const create: ApiKeysShape["create"] = (options) =>
    Effect.gen(function*() {
      const apiKey = token()
      const secretKey = token()
      const userId = options.userId ?? Number((yield* sql<{ id: string }>`INSERT INTO users DEFAULT VALUES RETURNING id`)[0]!.id)
      yield* sql`INSERT INTO api_keys (api_key, user_id, secret_enc, scopes, ip_allowlist, label) VALUES (
        ${apiKey}, ${userId}, ${box.seal(secretKey)}, ${[...options.scopes]}::text[],
        ${[...(options.ipAllowlist ?? [])]}::text[], ${options.label ?? null})`
      for (const address of options.addresses ?? []) {
        yield* sql`INSERT INTO user_addresses (user_id, address) VALUES (${userId}, ${address}) ON CONFLICT DO NOTHING`
      }
      return { apiKey, secretKey, userId }
    }).pipe(sql.withTransaction, Effect.orDie)

  const list: ApiKeysShape["list"] = sql<{
    api_key: string; user_id: string; scopes: Array<string>; ip_allowlist: Array<string>; created_at: Date; revoked_at: Date | null
  }>`SELECT api_key, user_id, scopes, ip_allowlist, created_at, revoked_at FROM api_keys ORDER BY created_at`.pipe(
    Effect.map((rows) => rows.map((r) => ({
      apiKey: r.api_key,
      userId: Number(r.user_id),
      scopes: r.scopes as Array<Scope>,
      ipAllowlist: r.ip_allowlist,
      createdAt: new Date(r.created_at).toISOString(),
      revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at).toISOString()
    }))),
    Effect.orDie
  )

  const revoke: ApiKeysShape["revoke"] = (apiKey) =>
    sql<{ api_key: string }>`UPDATE api_keys SET revoked_at = now() WHERE api_key = ${apiKey} AND revoked_at IS NULL RETURNING api_key`.pipe(
      Effect.map((rows) => {
        cache.delete(apiKey)
        return rows.length > 0
      }),
      Effect.orDie
    )

  const load = (apiKey: string) =>
    sql<Row>`SELECT api_key, user_id, secret_enc, scopes, ip_allowlist FROM api_keys
      WHERE api_key = ${apiKey} AND revoked_at IS NULL`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((r): ApiKeyRecord => ({
        apiKey: r.api_key,
        userId: Number(r.user_id),
        secret: box.open(r.secret_enc),
        scopes: r.scopes.filter((s): s is Scope => s === "read" || s === "trade"),
        ipAllowlist: r.ip_allowlist
      })))),
      Effect.orDie
    )

  const lookup: ApiKeysShape["lookup"] = (apiKey) =>
    Effect.suspend(() => {
      // Keys are 64 base62 characters; anything else cannot exist, so skip the database.
      if (!/^[A-Za-z0-9]{1,128}$/.test(apiKey)) return Effect.succeed(Option.none())
      const now = Date.now()
      const hit = cache.get(apiKey)
      if (hit && now - hit.at < cacheTtlMs) return Effect.succeed(hit.value)
      return Effect.tap(load(apiKey), (value) =>
        Effect.sync(() => {
          if (cache.size >= cacheEntriesMax) cache.clear()
          cache.set(apiKey, { at: now, value })
        }))
    })

  const peek: ApiKeysShape["peek"] = (apiKey) => {
    const hit = cache.get(apiKey)
    return hit && Date.now() - hit.at < cacheTtlMs ? hit.value : undefined
  }

  return ApiKeys.of({ create, list, revoke, lookup, peek })
})

export const layer = Layer.effect(ApiKeys, make)

