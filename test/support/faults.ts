// What the fault tests share: polling until a probe yields a value, our own Omni indexer over a
// chain that outlives the nodes, and which node owns which shard.
import type { TestDatabase } from "../../harness/db.ts"

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `probe` every `everyMs` until it yields a value; throws after `timeoutMs`. */
export const waitFor = async <A>(what: string, timeoutMs: number, probe: () => Promise<A | undefined>, everyMs = 200): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}

/** Our own indexer over the node's chain (test/support/omniChainIndex.ts). */
export { omniChainIndex as chainIndex } from "./omniChainIndex.ts"

/** Shard number → owning node (its application_name), from the advisory locks each runner's connection holds. */
export const shardOwners = async (db: TestDatabase, shardsTotal = 300): Promise<Map<number, string>> => {
  const rows = await db.query<{ shard: number; node: string }>(`
    SELECT (l.objid::bigint - 1000000)::int AS shard, a.application_name AS node
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.objid::bigint BETWEEN 1000001 AND ${1_000_000 + shardsTotal}`)
  return new Map(rows.map((r) => [r.shard, r.node]))
}
