// What the database says about one grant (`authorizations show`, and the CLI's look-up after a
// grant whose answer did not come): its events and, while it lives, its cap, expiry and address.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

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
    const last = events[events.length - 1]!.kind
    return Option.some<GrantRecord>({
      grantId,
      userId: Number(events[0]!.user_id),
      asset: events[0]!.asset,
      status: last === "expired" ? "expired" : last === "replaced" ? "replaced" : "granted",
      cap: live[0]?.cap ?? null,
      expiresAt: live[0] ? new Date(live[0].expires_at).getTime() : null,
      delegatedAddress: live[0]?.delegated_address ?? null,
      events: events.map((e) => ({ kind: e.kind, at: new Date(e.at).toISOString() }))
    })
  })
