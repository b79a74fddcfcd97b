// The account (ledger addresses and live authorizations) served from memory. A miss loads the
// user once; writers that change what it shows `pg_notify(accountChannel, userId)` in their
// transaction and every node drops that user at commit. A missed notification (LISTEN lost its
// connection) heals in the background: entries older than `revalidateAfterMs` are reloaded, and
// all of them are dropped when LISTEN is back after losing its connection.
// Expiry needs no message: a grant whose expiresAt has passed is filtered out at read time.
//
// Writers that must notify (notifyAccountChanged): the Authorization entity (grant, replace,
// expire) and ApiKeys.create (user_addresses). The Market entity notifies the users of every batch (orders reserve, fills use).
import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { listen } from "../../platform/database/Notifications.ts"

export interface AccountGrant {
  readonly asset: string
  readonly cap: string
  /** Satoshis spent through the grant (its settlement legs), held by open orders, and sent but not yet confirmed. */
  readonly usedSats: string
  readonly reservedSats: string
  readonly pendingOutSats: string
  readonly expiresAt: number
  readonly delegatedAddress: string
}

export interface AccountData {
  readonly addresses: ReadonlyArray<string>
  readonly grants: ReadonlyArray<AccountGrant>
}

export interface AccountReadModelShape {
  /** From memory in steady state; loads once on a miss. Grants whose expiresAt <= now are filtered out at read time. */
  readonly read: (userId: number) => Effect.Effect<AccountData>
}

export class AccountReadModel extends Context.Tag("shardline/AccountReadModel")<AccountReadModel, AccountReadModelShape>() {}

/** The channel writers notify with the user id (or ids joined by ',') as payload. */
export const accountChannel = "shardline_accounts"

/**
 * The users a notification names: one id, or several joined by ',' (a market batch names all its
 * users in one notification, `accountPayloads`). Anything else names no one.
 */
export const userIdsOf = (payload: string): ReadonlyArray<number> => {
  const out: Array<number> = []
  for (const part of payload.split(",")) {
    const id = Number(part)
    if (part !== "" && Number.isSafeInteger(id)) out.push(id)
  }
  return out
}

/** Postgres refuses a notification payload of 8,000 bytes or more. */
const payloadMax = 7_900

/** `userIds` as few notification payloads as fit (each under Postgres's 8,000-byte limit). */
export const accountPayloads = (userIds: ReadonlyArray<number>): ReadonlyArray<string> => {
  const out: Array<string> = []
  let current = ""
  for (const id of userIds) {
    const part = String(id)
    if (current !== "" && current.length + 1 + part.length > payloadMax) {
      out.push(current)
      current = ""
    }
    current = current === "" ? part : `${current},${part}`
  }
  if (current !== "") out.push(current)
  return out
}

/** `SELECT pg_notify(...)`: call it inside the writer's transaction; it is delivered at commit. */
export const notifyAccountChanged = (userId: number): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_notify(${accountChannel}, ${String(userId)})`).pipe(Effect.asVoid)

/** Users cached per node at most; past it the least recently loaded is dropped. */
export const accountsCachedMax = 50_000
/** An entry older than this is reloaded in the background (heals a missed notification), ms. */
export const revalidateAfterMs = 60_000
/** An entry not read for this long is dropped instead of reloaded, ms. */
export const idleDropAfterMs = 5 * 60_000
/** How often the background pass runs, and how many users one reload statement takes at most. */
export const revalidateEveryMs = 5_000
export const revalidateBatchMax = 1_000
/** Users remembered as changed while loads are running; past it every running load is treated as stale. */
const changedDuringLoadMax = 10_000

interface Row {
  readonly user_id: string
  readonly addresses: ReadonlyArray<string>
  readonly grants: ReadonlyArray<{ asset: string; cap: string; used: string; reserved: string; pending_out: string; expires_at: string; delegated_address: string }>
}

interface Entry {
  readonly data: AccountData
  readonly loadedAt: number
  readAt: number
}

/** Pure: the account as shown at `nowMs` (an expired grant is never shown, even before its timer runs). */
export const liveAt = (data: AccountData, nowMs: number): AccountData =>
  data.grants.every((g) => g.expiresAt > nowMs) ? data : { addresses: data.addresses, grants: data.grants.filter((g) => g.expiresAt > nowMs) }

export interface RevalidationOptions {
  readonly revalidateAfterMs?: number
  readonly revalidateEveryMs?: number
}

export const make = (options: RevalidationOptions = {}) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const staleAfterMs = options.revalidateAfterMs ?? revalidateAfterMs
  const cache = new Map<number, Entry>()

  /** One round trip for any number of users: addresses and live grants as two JSON arrays each. */
  const load = (userIds: ReadonlyArray<number>) =>
    sql<Row>`
      SELECT u.id::text AS user_id,
        (SELECT coalesce(json_agg(address ORDER BY created_at, address), '[]') FROM user_addresses WHERE user_id = u.id) AS addresses,
        (SELECT coalesce(json_agg(json_build_object('asset', a.asset, 'cap', a.cap::text,
            'used', (SELECT coalesce(sum(l.amount), 0) FROM settlement_legs l WHERE l.grant_id = a.grant_id AND l.status <> 'failed')::text,
            'reserved', (SELECT coalesce(sum(o.reserved), 0) FROM orders o WHERE o.grant_id = a.grant_id AND o.status IN ('NEW', 'PARTIALLY_FILLED'))::text,
            'pending_out', (SELECT coalesce(sum(l.amount), 0) FROM settlement_legs l WHERE l.from_address = a.delegated_address
              AND l.status IN ('recorded', 'signed', 'broadcast'))::text,
            'expires_at', (extract(epoch FROM a.expires_at) * 1000)::bigint::text, 'delegated_address', a.delegated_address) ORDER BY a.asset), '[]')
         FROM authorizations a WHERE a.user_id = u.id AND a.expires_at > now()) AS grants
      FROM unnest(${userIds.map(String)}::bigint[]) AS u(id)`.pipe(
      Effect.map((rows) =>
        rows.map((r): [number, AccountData] => [Number(r.user_id), {
          addresses: r.addresses,
          grants: r.grants.map((g) => ({
            asset: g.asset,
            cap: g.cap,
            usedSats: g.used,
            reservedSats: g.reserved,
            pendingOutSats: g.pending_out,
            expiresAt: Number(g.expires_at),
            delegatedAddress: g.delegated_address
          }))
        }])
      )
    )

  // A notification that arrives while a load is running means the load may have read the old
  // rows: its result for that user is returned but not cached.
  let seq = 0
  let loadsRunning = 0
  let allChangedAt = 0
  const changedDuringLoad = new Map<number, number>()

  const invalidate = (userId: number) => {
    seq++
    cache.delete(userId)
    if (loadsRunning === 0) return
    if (changedDuringLoad.size >= changedDuringLoadMax) {
      changedDuringLoad.clear()
      allChangedAt = seq
    } else {
      changedDuringLoad.set(userId, seq)
    }
  }

  const put = (userId: number, data: AccountData, readAt: number) => {
    cache.delete(userId) // re-inserted last: map order is load order
    while (cache.size >= accountsCachedMax) cache.delete(cache.keys().next().value!)
    cache.set(userId, { data, loadedAt: Date.now(), readAt })
  }

  const loadAndCache = (userIds: ReadonlyArray<number>, readAt: (userId: number) => number) =>
    Effect.suspend(() => {
      const startedAt = seq
      loadsRunning++
      return load(userIds).pipe(
        Effect.tap((rows) =>
          Effect.sync(() => {
            for (const [userId, data] of rows) {
              if (allChangedAt > startedAt || (changedDuringLoad.get(userId) ?? 0) > startedAt) continue
              put(userId, data, readAt(userId))
            }
          })),
        Effect.ensuring(Effect.sync(() => {
          if (--loadsRunning === 0) changedDuringLoad.clear()
        }))
      )
    })

  const read: AccountReadModelShape["read"] = (userId) =>
    Effect.suspend(() => {
      const now = Date.now()
      const hit = cache.get(userId)
      if (hit !== undefined) {
        hit.readAt = now
        return Effect.succeed(liveAt(hit.data, now))
      }
      return loadAndCache([userId], () => now).pipe(
        Effect.map((rows) => liveAt(rows[0]?.[1] ?? { addresses: [], grants: [] }, Date.now())),
        Effect.orDie
      )
    })

  /** Drops idle entries, reloads old ones (a missed notification heals here). */
  const revalidate = Effect.suspend(() => {
    const now = Date.now()
    const due: Array<number> = []
    for (const [userId, entry] of cache) {
      if (now - entry.readAt > idleDropAfterMs) cache.delete(userId)
      else if (now - entry.loadedAt > staleAfterMs && due.length < revalidateBatchMax) due.push(userId)
    }
    if (due.length === 0) return Effect.void
    return loadAndCache(due, (userId) => cache.get(userId)?.readAt ?? now)
  })
  yield* revalidate.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("account revalidation failed; retrying", cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(options.revalidateEveryMs ?? revalidateEveryMs))),
    Effect.forkScoped
  )

  // LISTEN back after its connection was lost: notifications of the gap are gone, so every entry
  // is dropped (loads running now may have read rows the gap changed: not cached either).
  const invalidateAll = () => {
    seq++
    cache.clear()
    if (loadsRunning > 0) {
      changedDuringLoad.clear()
      allChangedAt = seq
    }
  }
  yield* listen(accountChannel, (payload) => {
    for (const id of userIdsOf(payload)) invalidate(id)
  }, invalidateAll)

  return AccountReadModel.of({ read })
})

export const layer: Layer.Layer<AccountReadModel, never, SqlClient.SqlClient> = Layer.scoped(AccountReadModel, make())
