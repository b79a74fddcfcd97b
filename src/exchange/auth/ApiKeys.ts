// API keys: created by the CLI, read on every signed request. The secret is needed to check an
// HMAC, so it is stored encrypted (not hashed) and decrypted into a per-node cache.
//
// The cache answers without a round trip in steady state. A key is cached until it is revoked:
// `revoke` notifies `apiKeysChannel` in its own statement and every node drops the key at commit.
// LISTEN can miss messages (its connection drops), so each node also polls every
// `revocationPollMs` for keys revoked since its last poll: a revocation reaches every node within
// `revocationPollMs` plus a round trip, notification or not. Unknown keys are cached as absent for
// `absentTtlMs` (random keys cannot hammer Postgres with repeats); `create` notifies too, so a
// node drops an absent entry for the new key at once.
import { randomInt } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { listen } from "../../platform/database/Notifications.ts"
import { checkMasterKey as checkKeyAgainst, SecretBox } from "../../platform/SecretBox.ts"
import { notifyAccountChanged } from "../account/AccountReadModel.ts"

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

/** The channel `create` and `revoke` notify; payload `created:<key>` or `revoked:<key>`. */
export const apiKeysChannel = "shardline_api_keys"
/** How often each node asks for keys revoked since its last poll (ms); bounds a missed notification. */
export const revocationPollMs = 1_000
/** Each poll looks back this far past its cursor, for revocations committed after a later poll read (ms). */
export const revocationOverlapMs = 5_000
/** How long an unknown key is remembered as absent (ms). */
export const absentTtlMs = 2_000
/** Known keys (live or revoked) cached per node at most; past it the least recently loaded goes. */
export const keysCachedMax = 100_000
/** Unknown keys remembered as absent at most; past it the oldest goes. */
export const absentCachedMax = 10_000

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
  /** A live (not revoked) key, or none. From memory when cached. */
  readonly lookup: (apiKey: string) => Effect.Effect<Option.Option<ApiKeyRecord>>
  /** Synchronous: the cached live key, Option.none() if cached as absent/revoked, undefined if not cached (caller falls back to lookup). */
  readonly peek: (apiKey: string) => Option.Option<ApiKeyRecord> | undefined
}

export class ApiKeys extends Context.Tag("shardline/ApiKeys")<ApiKeys, ApiKeysShape>() {}

interface Row {
  readonly api_key: string
  readonly user_id: string
  readonly secret_enc: string
  readonly scopes: ReadonlyArray<string>
  readonly ip_allowlist: ReadonlyArray<string>
  readonly revoked: boolean
}

/** Keys are 64 base62 characters; anything else cannot exist, so it never reaches the database. */
const plausible = (apiKey: string) => /^[A-Za-z0-9]{1,128}$/.test(apiKey)

/** A Map that drops its oldest entry past `max` (insertion order; `set` moves a key to the end). */
const boundedSet = <K, V>(map: Map<K, V>, max: number, key: K, value: V) => {
  map.delete(key)
  while (map.size >= max) map.delete(map.keys().next().value!)
  map.set(key, value)
}

export interface CacheOptions {
  /** LISTEN on apiKeysChannel (false: revocations arrive by the poll alone). */
  readonly listen: boolean
  readonly revocationPollMs?: number
}

/**
 * The platform's master-key check (SecretBox.ts); on a database from before its check value, the
 * key must open the newest API secret.
 */
export const checkMasterKey = checkKeyAgainst({
  what: "the API secrets already in table api_keys (secret_enc)",
  newest: Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ secret_enc: string }>`SELECT secret_enc FROM api_keys ORDER BY created_at DESC LIMIT 1`, (rows) => rows[0]?.secret_enc)).pipe(Effect.orDie)
})

export const make = (cache: CacheOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    // Every process that reads or seals API secrets (node, CLI) refuses a master key that does not open them.
    yield* checkMasterKey
    /** Known keys: the live record, or none once revoked (a revoked key never comes back). */
    const known = new Map<string, Option.Option<ApiKeyRecord>>()
    /** Unknown keys, with the time they stop being trusted as absent. */
    const absent = new Map<string, number>()

    const revoked = (apiKey: string) => {
      absent.delete(apiKey)
      if (known.has(apiKey)) known.set(apiKey, Option.none())
    }
    const created = (apiKey: string) => {
      absent.delete(apiKey)
    }

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
        // Delivered at commit: every node forgets the key as absent and reloads the user's account.
        yield* sql`SELECT pg_notify(${apiKeysChannel}, ${`created:${apiKey}`})`
        yield* Effect.provideService(notifyAccountChanged(userId), SqlClient.SqlClient, sql)
        return { apiKey, secretKey, userId }
      }).pipe(sql.withTransaction, Effect.tap((r) => Effect.sync(() => created(r.apiKey))), Effect.orDie)

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

    // One statement: the notification is part of the revoking transaction, delivered at its commit.
    const revoke: ApiKeysShape["revoke"] = (apiKey) =>
      sql<{ api_key: string }>`WITH r AS (
          UPDATE api_keys SET revoked_at = now() WHERE api_key = ${apiKey} AND revoked_at IS NULL RETURNING api_key
        )
        SELECT api_key, pg_notify(${apiKeysChannel}, 'revoked:' || api_key) FROM r`.pipe(
        Effect.map((rows) => {
          revoked(apiKey)
          return rows.length > 0
        }),
        Effect.orDie
      )

    const load = (apiKey: string) =>
      sql<Row>`SELECT api_key, user_id, secret_enc, scopes, ip_allowlist, revoked_at IS NOT NULL AS revoked
        FROM api_keys WHERE api_key = ${apiKey}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    const peek: ApiKeysShape["peek"] = (apiKey) => {
      if (!plausible(apiKey)) return Option.none()
      const hit = known.get(apiKey)
      if (hit !== undefined) return hit
      const until = absent.get(apiKey)
      if (until === undefined) return undefined
      if (until > Date.now()) return Option.none()
      absent.delete(apiKey)
      return undefined
    }

    const lookup: ApiKeysShape["lookup"] = (apiKey) =>
      Effect.suspend(() => {
        const cached = peek(apiKey)
        if (cached !== undefined) return Effect.succeed(cached)
        return Effect.map(load(apiKey), (row) => {
          if (row === undefined) {
            boundedSet(absent, absentCachedMax, apiKey, Date.now() + absentTtlMs)
            return Option.none()
          }
          const value = row.revoked ? Option.none<ApiKeyRecord>() : Option.some<ApiKeyRecord>({
            apiKey: row.api_key,
            userId: Number(row.user_id),
            secret: box.open(row.secret_enc),
            scopes: row.scopes.filter((s): s is Scope => s === "read" || s === "trade"),
            ipAllowlist: row.ip_allowlist
          })
          // A revocation committed after this read is applied by its notification or, failing
          // that, by the next poll (it looks back past its cursor), so caching here is safe.
          boundedSet(known, keysCachedMax, apiKey, value)
          return value
        })
      })

    // The poll: keys revoked since the cursor (minus an overlap for late commits). The cursor is
    // the database's clock, advanced only by a poll that succeeded, so an outage misses nothing.
    let cursor: Date | null = null
    const poll = Effect.gen(function*() {
      const rows = yield* sql<{ now: Date; api_key: string | null }>`
        SELECT n.now, k.api_key FROM (SELECT now() AS now) n
        LEFT JOIN api_keys k
          ON k.revoked_at > coalesce(${cursor}::timestamptz, n.now) - make_interval(secs => ${revocationOverlapMs / 1000})`
      for (const r of rows) if (r.api_key !== null) revoked(r.api_key)
      cursor = rows[0]!.now
    })
    let failing = false // logs once per outage, not once per tick
    yield* poll.pipe(
      Effect.matchCauseEffect({
        onFailure: (cause) =>
          Effect.suspend(() => {
            if (failing) return Effect.void
            failing = true
            return Effect.logWarning("API key revocation poll failed; retrying every tick", cause)
          }),
        onSuccess: () =>
          Effect.suspend(() => {
            if (!failing) return Effect.void
            failing = false
            return Effect.logInfo("API key revocation poll recovered")
          })
      }),
      Effect.repeat(Schedule.spaced(Duration.millis(cache.revocationPollMs ?? revocationPollMs))),
      Effect.forkScoped
    )

    if (cache.listen) {
      yield* listen(apiKeysChannel, (payload) => {
        if (payload.startsWith("revoked:")) revoked(payload.slice("revoked:".length))
        else if (payload.startsWith("created:")) created(payload.slice("created:".length))
      })
    }

    return ApiKeys.of({ create, list, revoke, lookup, peek })
  })

/** The cache with its LISTEN fiber and revocation poll. */
export const layer = Layer.scoped(ApiKeys, make({ listen: true }))
/** Without LISTEN: revocations arrive by the poll alone (tests of the fallback; processes that only write). */
export const layerNoListen = Layer.scoped(ApiKeys, make({ listen: false }))
