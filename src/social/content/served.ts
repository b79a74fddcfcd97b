// Whether the gateway serves a CID now (spec: unpinned content "survives on the service but may
// not be served"): never while a moderator's pull blocks it (blocked.ts); otherwise an item no post
// holds (a fresh upload) is served, and an item posts hold while any of them is hosted or in grace.
// Answers are kept per node for servedCacheMs; the node whose Post entity unpins or blocks forgets
// them at once (`forgetServed`), other nodes see it within that time.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** How long a node trusts its last answer to "is this CID served?", ms: an unpin or a block shows within it. */
export const servedCacheMs = 1_000
const servedCacheEntriesMax = 10_000

/** served; unpinned: every post holding it stopped hosting it; blocked: a moderator's pull blocks it (blocked.ts). */
export type ServedState = "served" | "unpinned" | "blocked"
const servedSeen = new Map<string, { readonly at: number; readonly state: ServedState }>()

/**
 * Whether the gateway serves a CID now: never while a moderator's block holds it; otherwise an item
 * no post holds (a fresh upload) is, and an item posts hold is while any of them is hosted or in grace.
 */
export const servedState = (cid: string) =>
  Effect.suspend(() => {
    const hit = servedSeen.get(cid)
    if (hit !== undefined && Date.now() - hit.at < servedCacheMs) return Effect.succeed(hit.state)
    return Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ n: number; served: boolean | null; blocked: boolean }>`SELECT count(*)::int AS n, bool_or(p.state IN ('hosted', 'grace')) AS served,
          EXISTS (SELECT 1 FROM social_blocked_cids b WHERE b.cid = ${cid} AND b.lifted_at IS NULL) AS blocked
        FROM social_post_cids c JOIN social_posts p ON p.id = c.post_id WHERE c.cid = ${cid}`.pipe(
        Effect.map(([row]): ServedState =>
          row?.blocked === true ? "blocked" : row === undefined || row.n === 0 || row.served === true ? "served" : "unpinned"),
        Effect.tap((state) => Effect.sync(() => {
          if (servedSeen.size >= servedCacheEntriesMax) servedSeen.delete(servedSeen.keys().next().value!)
          servedSeen.set(cid, { at: Date.now(), state })
        }))
      ))
  })

/** Drops what this node remembers about these CIDs (after an unpin, takedown, renewal, block or lift). */
export const forgetServed = (cids: ReadonlyArray<string>): void => {
  for (const cid of cids) servedSeen.delete(cid)
}

/** Without I/O: whether the last answer for this CID, if still fresh, was "served"; undefined when none is fresh. */
export const servedNow = (cid: string): boolean | undefined => {
  const hit = servedSeen.get(cid)
  return hit !== undefined && Date.now() - hit.at < servedCacheMs ? hit.state === "served" : undefined
}
