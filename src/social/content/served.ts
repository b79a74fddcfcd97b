// Whether the gateway serves a CID now (spec: unpinned content "survives on the service but may
// not be served"): an item no post holds (a fresh upload) is served; otherwise while any post
// holding it is hosted or in grace. Answers are kept per node for servedCacheMs; the node whose
// Post entity unpins forgets them at once (`forgetServed`), other nodes see it within that time.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** How long a node trusts its last answer to "is this CID served?", ms: an unpin shows within it. */
export const servedCacheMs = 1_000
const servedCacheEntriesMax = 10_000
const servedSeen = new Map<string, { readonly at: number; readonly served: boolean }>()

/** Which content is served: an item no post holds (a fresh upload) is; otherwise while any post holding it is. */
export const servedCid = (cid: string) =>
  Effect.suspend(() => {
    const hit = servedSeen.get(cid)
    if (hit !== undefined && Date.now() - hit.at < servedCacheMs) return Effect.succeed(hit.served)
    return Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ n: number; served: boolean | null }>`SELECT count(*)::int AS n, bool_or(p.state IN ('hosted', 'grace')) AS served
        FROM social_post_cids c JOIN social_posts p ON p.id = c.post_id WHERE c.cid = ${cid}`.pipe(
        Effect.map(([row]) => row === undefined || row.n === 0 || row.served === true),
        Effect.tap((served) => Effect.sync(() => {
          if (servedSeen.size >= servedCacheEntriesMax) servedSeen.delete(servedSeen.keys().next().value!)
          servedSeen.set(cid, { at: Date.now(), served })
        }))
      ))
  })

/** Drops what this node remembers about these CIDs (after an unpin, takedown or renewal). */
export const forgetServed = (cids: ReadonlyArray<string>): void => {
  for (const cid of cids) servedSeen.delete(cid)
}

/** Without I/O: the last answer for this CID if it is still fresh; undefined otherwise. */
export const servedNow = (cid: string): boolean | undefined => {
  const hit = servedSeen.get(cid)
  return hit !== undefined && Date.now() - hit.at < servedCacheMs ? hit.served : undefined
}
