// The cluster's own record of one entity's persisted messages, for a violation about a durable
// timer: when each message was written and by which runner (its Snowflake id says both), whether
// it is processed, when a runner last read it, and every reply written for it (one per time the
// handler's answer was stored). A timer delivered twice shows here as what the storage did: two
// replies, a read mark cleared and read again, or a message written twice. Read from Postgres
// after the run, before the world stops; printed under the violation (CI keeps only the output).
import { Snowflake } from "@effect/cluster"
import type { World } from "./world.ts"

export interface TrailRow {
  readonly id: string
  readonly tag: string
  readonly payload: string
  readonly processed: boolean
  readonly lastReadMs: number | null
  readonly replies: ReadonlyArray<{ readonly id: string; readonly kind: number; readonly acked: boolean }>
}

/** Run-clock seconds and the writer's machine id of a Snowflake id. */
const stamp = (id: string, runStartMs: number): string => {
  const s = Snowflake.Snowflake(BigInt(id))
  return `${((Snowflake.timestamp(s) - runStartMs) / 1000).toFixed(1)} s by m${Snowflake.machineId(s)}`
}

/** One line per message, its replies after it; `machines` names each machine id (runner address). */
export const trailLines = (rows: ReadonlyArray<TrailRow>, runStartMs: number, machines: ReadonlyMap<number, string>): ReadonlyArray<string> => [
  ...rows.map((r) => {
    const read = r.lastReadMs === null ? "no read mark" : `last read ${((r.lastReadMs - runStartMs) / 1000).toFixed(1)} s`
    const replies = r.replies.length === 0 ? "no reply" : r.replies.map((p) => `${p.kind === 0 ? "exit" : "chunk"} ${stamp(p.id, runStartMs)}${p.acked ? " acked" : ""}`).join(", ")
    return `${r.tag} ${r.payload.slice(0, 80)} written ${stamp(r.id, runStartMs)}; ${r.processed ? "processed" : "unprocessed"}, ${read}; replies: ${replies}`
  }),
  ...(machines.size === 0 ? [] : [`machines: ${[...machines].map(([m, a]) => `m${m} ${a}`).join(", ")}`])
]

/** The persisted messages of one entity whose payload contains `payloadPart`, oldest first, rendered. */
export const messageTrail = async (world: Pick<World, "query">, entityType: string, entityId: string, payloadPart: string, runStartMs: number): Promise<ReadonlyArray<string>> => {
  const rows = await world.query<{ id: string; tag: string; payload: string; processed: boolean; last_read_ms: number | null; replies: Array<{ id: string; kind: number; acked: boolean }> | null }>(
    `SELECT m.id::text, m.tag, m.payload, m.processed, (extract(epoch FROM m.last_read) * 1000)::float8 AS last_read_ms,
      (SELECT json_agg(json_build_object('id', r.id::text, 'kind', r.kind, 'acked', r.acked) ORDER BY r.id) FROM cluster_replies r WHERE r.request_id = m.request_id) AS replies
     FROM cluster_messages m WHERE m.entity_type = $1 AND m.entity_id = $2 AND strpos(m.payload, $3) > 0 ORDER BY m.id`,
    [entityType, entityId, payloadPart]
  )
  const runners = await world.query<{ machine_id: number; address: string }>(`SELECT machine_id, address FROM cluster_runners`)
  return trailLines(
    rows.map((r) => ({ id: r.id, tag: r.tag, payload: r.payload, processed: r.processed, lastReadMs: r.last_read_ms, replies: r.replies ?? [] })),
    runStartMs,
    new Map(runners.map((r) => [r.machine_id, r.address]))
  )
}
