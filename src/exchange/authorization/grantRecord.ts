// What the database says about one grant (`authorizations show`, and the CLI's look-up after a
// grant whose answer did not come): its events and, while it lives, its cap, expiry and address;
// once it has happened, when its key became unrecoverable.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { epochEndMs } from "./keyEpochs.ts"

export interface GrantRecord {
  readonly grantId: string
  readonly userId: number
  readonly asset: string
  /** granted: live; expired or replaced: its key is destroyed. */
  readonly status: "granted" | "expired" | "replaced"
  readonly cap: string | null
  readonly expiresAt: number | null
  readonly delegatedAddress: string | null
  readonly events: ReadonlyArray<{ readonly kind: string; readonly at: string }>
  /**
   * When the grant's delegated key became unrecoverable (ISO time): the end of the key epoch it
   * was sealed under (expiry + the sweep grace, then at most one epoch), once a node's ratchet has
   * passed it. Null before (and for a grant sealed before migration 0037 and gone since).
   */
  readonly keyDestroyedAt: string | null
}

/** The key's epoch has ended and a node's ratchet file has moved past it: that end, else null. */
const destroyedAt = (row: { key_epoch: string | null; period_ms: number | null; ratcheted_epoch: string | null } | undefined): string | null => {
  if (row?.key_epoch == null || row.period_ms == null || row.ratcheted_epoch == null) return null
  const epoch = Number(row.key_epoch)
  return Number(row.ratcheted_epoch) > epoch ? new Date(epochEndMs(row.period_ms, epoch)).toISOString() : null
}

/** None if the grant was never committed. */
export const readGrant = (grantId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* sql<{ kind: string; at: Date; user_id: string; asset: string }>`
      SELECT kind, at, user_id, asset FROM authorization_events WHERE grant_id = ${grantId} ORDER BY at, id`
    if (events.length === 0) return Option.none<GrantRecord>()
    const live = yield* sql<{ cap: string; expires_at: Date; delegated_address: string }>`
      SELECT cap::text AS cap, expires_at, delegated_address FROM authorizations WHERE grant_id = ${grantId}`
    const [key] = yield* sql<{ key_epoch: string | null; period_ms: number | null; ratcheted_epoch: string | null }>`
      SELECT e.key_epoch::text, c.period_ms, c.ratcheted_epoch::text FROM authorization_events e
      LEFT JOIN key_epoch_chain c ON c.id = 1 WHERE e.grant_id = ${grantId} AND e.kind = 'granted'`
    const last = events[events.length - 1]!.kind
    return Option.some<GrantRecord>({
      grantId,
      userId: Number(events[0]!.user_id),
      asset: events[0]!.asset,
      status: last === "expired" ? "expired" : last === "replaced" ? "replaced" : "granted",
      cap: live[0]?.cap ?? null,
      expiresAt: live[0] ? new Date(live[0].expires_at).getTime() : null,
      delegatedAddress: live[0]?.delegated_address ?? null,
      events: events.map((e) => ({ kind: e.kind, at: new Date(e.at).toISOString() })),
      keyDestroyedAt: destroyedAt(key)
    })
  })
