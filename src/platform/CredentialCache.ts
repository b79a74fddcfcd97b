// A node-local cache of bearer credentials (desk API keys, social sessions), keyed by the
// secret's SHA-256, so a steady-state authenticated request does no database round trip.
//
// Revocation reaches every node within 2 s by polling, not by TTL: every `pollMs` one query asks
// for the hashes revoked since the last poll (database clock, with `marginMs` of overlap so a
// revoke committed late, or a load that raced a poll, is seen again) and evicts them. The cache
// answers only while its last successful poll started less than `staleMs` ago; when polls fail
// (database down, node paused) every request goes to the database instead, so a revocation is
// never missed for longer than `staleMs`. Chosen over LISTEN/NOTIFY: a dropped notification
// connection loses revocations silently, a poll cannot, and one indexed query per node per
// `pollMs` is cheap. Unknown secrets are cached as unknown for `unknownTtlMs`, which bounds both
// the database load of junk credentials and how long a brand-new credential can be refused.
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Duration, Effect, Option, Schedule } from "effect"

export class CredentialsUnavailable extends Data.TaggedError("CredentialsUnavailable")<{ readonly reason: string }> {}

export interface CredentialSource<A> {
  /** Log name: "desk keys", "social sessions". */
  readonly name: string
  /** The table and its hash column; the table has a nullable `revoked_at TIMESTAMPTZ` (indexed where not null). */
  readonly table: string
  readonly hashColumn: string
  /** The live (not revoked) credential with this hash. */
  readonly load: (hash: string) => Effect.Effect<Option.Option<A>, SqlError>
}

export const credentialCacheLimits = {
  pollMs: 500,
  staleMs: 1_500,
  marginMs: 10_000,
  unknownTtlMs: 1_000,
  /** A cached credential is re-read at least this often (terms such as fees may change). */
  knownTtlMs: 300_000,
  entriesMax: 100_000
} as const

export interface CredentialCache<A> {
  readonly get: (hash: string) => Effect.Effect<Option.Option<A>, CredentialsUnavailable>
  /** Evicts one credential now (this node revoked it; the others' polls follow). */
  readonly forget: (hash: string) => void
}

/** Scoped: the poller runs as long as the scope. */
export const makeCredentialCache = <A>(source: CredentialSource<A>, limits = credentialCacheLimits) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // One row always: the database's clock, and the hashes revoked since `since` (an empty array for none).
    const revokedSince = (since: Date) =>
      sql<{ now: Date; hashes: ReadonlyArray<string> }>`SELECT now() AS now, coalesce(array_agg(${sql(source.hashColumn)}), '{}') AS hashes
        FROM ${sql(source.table)} WHERE revoked_at >= ${since}`.pipe(Effect.map((rows) => ({ now: new Date(rows[0]!.now), hashes: rows[0]!.hashes })))
    const entries = new Map<string, { readonly at: number; readonly value: Option.Option<A> }>()
    let syncedAt = Number.NEGATIVE_INFINITY
    let since: Date | undefined
    let failing = false

    const poll = Effect.gen(function*() {
      const started = Date.now()
      const { hashes, now } = yield* revokedSince(since ?? new Date(0))
      for (const hash of hashes) entries.delete(hash)
      since = new Date(now.getTime() - limits.marginMs)
      syncedAt = started
      if (failing) yield* Effect.logInfo(`${source.name}: revocation poll recovered`)
      failing = false
    }).pipe(Effect.catchAll((e) =>
      failing ? Effect.void : Effect.logWarning(`${source.name}: revocation poll failed; reading every request from the database`, e).pipe(
        Effect.tap(() => (failing = true))
      )))

    yield* Effect.forkScoped(Effect.repeat(poll, Schedule.spaced(Duration.millis(limits.pollMs))))

    const remember = (hash: string, value: Option.Option<A>) => {
      if (entries.size >= limits.entriesMax) entries.delete(entries.keys().next().value!)
      entries.set(hash, { at: Date.now(), value })
    }

    const get = (hash: string): Effect.Effect<Option.Option<A>, CredentialsUnavailable> =>
      Effect.suspend(() => {
        const now = Date.now()
        const hit = entries.get(hash)
        if (hit !== undefined && now - syncedAt < limits.staleMs) {
          const ttl = Option.isSome(hit.value) ? limits.knownTtlMs : limits.unknownTtlMs
          if (now - hit.at < ttl) return Effect.succeed(hit.value)
        }
        return source.load(hash).pipe(
          Effect.tap((value) => Effect.sync(() => remember(hash, value))),
          Effect.mapError(() => new CredentialsUnavailable({ reason: `${source.name} cannot be read` }))
        )
      })

    const forget = (hash: string) => {
      entries.delete(hash)
    }

    return { get, forget } satisfies CredentialCache<A>
  })
