// The ops view of the whole cluster, read from Postgres so any node answers for all of them:
// runners, shard owners (authoritative: the advisory locks each runner's connection holds),
// live entities and restarts (each node's last report), pending timers and unprocessed messages.
import { Snowflake } from "@effect/cluster"
import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { AppConfig } from "../Config.ts"
import type { EvmChain } from "../../chain/evm/chains.ts"
import type { CoinChain } from "../../chain/params.ts"
import type { LastDefect } from "../entity/EntityMetrics.ts"
import type { ListenerTotals } from "../http/httpMetrics.ts"
import { InboundWebhooks, type InboundWebhooksReport } from "./InboundWebhooks.ts"

export interface OpsView {
  /** The full view (this one), or the one without a configured ops token (publicView.ts). */
  readonly access: "full"
  readonly at: string
  /**
   * Every row of cluster_runners. `state`: `gone` when its heartbeat is older than the shard lock
   * expiration (it has left the ring: a kill -9 leaves the row, still `healthy` when the health
   * check died with it), else `unhealthy` when the health check marked it so, else `healthy`.
   */
  readonly runners: ReadonlyArray<{ address: string; healthy: boolean; state: RunnerState; lastHeartbeat: string; heartbeatAgeMs: number }>
  /**
   * `pid` is the node's own process id, from its last report (null until it has reported);
   * `dbSessionPid` is the Postgres backend holding its shard locks, for pg_stat_activity.
   */
  readonly shardOwners: ReadonlyArray<{ node: string; pid: number | null; dbSessionPid: number; shards: number; sample: ReadonlyArray<string> }>
  readonly nodes: ReadonlyArray<{ node: string; updatedAt: string; stats: NodeStats }>
  readonly liveEntities: Record<string, number>
  /** Activations per entity type: first starts, moves after failover, and restarts. */
  readonly entityActivations: Record<string, number>
  /** Restarts caused by a handler defect, per entity type. */
  readonly entityRestarts: Record<string, number>
  readonly pendingTimers: { readonly count: number; readonly oldestDueAt: string | null }
  readonly unprocessedMessages: { readonly count: number; readonly oldestAt: string | null }
  /** Each node's view of each chain it uses, ledger first. */
  readonly chains: ReadonlyArray<ChainReport & { readonly node: string }>
  /** The fee sponsor as the node that looked last saw it; null before any node reported it. */
  readonly feeSponsor: (FeeSponsorReport & { readonly node: string }) | null
  /** Inbound partner webhooks (each one pages operations): the last day's count and the latest ten (InboundWebhooks.ts). */
  readonly partnerWebhooks: InboundWebhooksReport
}

/** The fee sponsor's address and what it can spend (ledger/FeeSponsor.ts), satoshis as a decimal string. */
export interface FeeSponsorReport {
  readonly address: string
  /** Null until this node has read it from the ledger. */
  readonly sats: string | null
  readonly checkedAt: string | null
}

/** One chain as a node last saw it (ops/ChainMonitor.ts). */
export interface ChainReport {
  readonly chain: "ledger" | EvmChain | CoinChain
  /** An in-process devnet, or a node over JSON-RPC. */
  readonly kind: "devnet" | "rpc"
  /** The node answered the last probe within the probe timeout. */
  readonly available: boolean
  /** Ledger, BTC or LTC tip height, or EVM block number; null when unavailable. */
  readonly height: number | null
  /** EVM only: the chain id the node reports; null when unavailable. */
  readonly chainId?: number | null
  /** Why it is unavailable. */
  readonly error?: string
  readonly checkedAt: string
}

export interface NodeStats {
  /** Absent in reports from nodes older than the live page (issue 26), like the fields below marked so. */
  readonly messages?: Record<string, number>
  /** Messages being handled right now, by entity type. */
  readonly inFlight?: Record<string, number>
  /** The last defect per entity type: its cause's first line and when. */
  readonly lastDefects?: Record<string, LastDefect>
  /** Timers run, cumulative by how late (upper bound in ms, "Infinity" last), over every entity type. */
  readonly timerLag?: Record<string, number>
  /** Requests answered per listener since the node started, with the 4xx and 5xx among them. */
  readonly http?: Record<string, ListenerTotals>
  /** This node's Postgres connections by state (pg_stat_activity) and its pool's size. */
  readonly db?: { readonly connections: Record<string, number>; readonly poolSize: number }
  /** Blocks the Omni view is behind the ledger's tip (null before both are known). */
  readonly followerLag?: number | null
  readonly liveEntities: Record<string, number>
  readonly activations: Record<string, number>
  readonly defects: Record<string, number>
  readonly shards: number
  /** The node's process id (absent in reports from older nodes). */
  readonly pid?: number
  /** Absent in reports from nodes older than the chains section. */
  readonly chains?: ReadonlyArray<ChainReport>
  /** Absent in reports from nodes older than the fee sponsor. */
  readonly feeSponsor?: FeeSponsorReport
}

/** SHARDLINE_SHARD_LOCK_EXPIRATION_MS's default, for a reader without the node's config (the CLI). */
export const defaultLockExpirationMs = 4000

const chainOrder: ReadonlyArray<ChainReport["chain"]> = ["ledger", "ethereum", "base", "bsc", "btc", "ltc"]

/** Shard groups in the order the cluster numbers their advisory locks ((index+1)*1e6 + shard). */
export const shardGroups = ["default"] as const

const shardOfLock = (lockNum: number): string | undefined => {
  const group = shardGroups[Math.floor(lockNum / 1_000_000) - 1]
  return group === undefined ? undefined : `${group}:${lockNum % 1_000_000}`
}

const sumBy = (nodes: ReadonlyArray<{ stats: NodeStats }>, pick: (s: NodeStats) => Record<string, number>) => {
  const out: Record<string, number> = {}
  for (const n of nodes) for (const [k, v] of Object.entries(pick(n.stats) ?? {})) out[k] = (out[k] ?? 0) + v
  return out
}

export type RunnerState = "healthy" | "unhealthy" | "gone"

/** Pure: a runner's state from its row and how old its heartbeat is (the cluster rounds the expiration up to seconds). */
export const runnerState = (healthy: boolean, heartbeatAgeMs: number, expirationMs: number): RunnerState =>
  heartbeatAgeMs > Math.ceil(expirationMs / 1000) * 1000 ? "gone" : healthy ? "healthy" : "unhealthy"

/** Fails with the SqlError when the database does not answer: GET /ops turns that into its
 * "database is down" 503 (a defect here became the generic internal error instead). */
export const readOpsView: Effect.Effect<OpsView, SqlError.SqlError, SqlClient.SqlClient | InboundWebhooks> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The node's own setting; the CLI (no node config) assumes the default.
  const expirationMs = Option.match(yield* Effect.serviceOption(AppConfig), { onNone: () => defaultLockExpirationMs, onSome: (c) => c.shardLockExpirationMs })
  // Heartbeats are written with the database's clock (a timestamp without time zone), so their age is its too.
  const runners = yield* sql<{ address: string; healthy: boolean; last_heartbeat: Date; age_ms: number }>`
    SELECT address, healthy, last_heartbeat, (extract(epoch FROM (localtimestamp - last_heartbeat)) * 1000)::float8 AS age_ms
    FROM cluster_runners ORDER BY address`.pipe(Effect.orElseSucceed(() => []))
  const locks = yield* sql<{ pid: number; app: string; objid: string }>`
    SELECT l.pid, coalesce(a.application_name, '') AS app, l.objid::text AS objid
    FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`
  const owners = new Map<string, { node: string; pid: number; shards: Array<string> }>()
  for (const l of locks) {
    const shard = shardOfLock(Number(l.objid))
    if (shard === undefined) continue
    const key = `${l.app}/${l.pid}`
    const o = owners.get(key) ?? { node: l.app, pid: Number(l.pid), shards: [] }
    o.shards.push(shard)
    owners.set(key, o)
  }
  const nodes = (yield* sql<{ node: string; stats: NodeStats | string; updated_at: Date }>`
    SELECT node, stats, updated_at FROM ops_nodes WHERE updated_at > now() - interval '30 seconds' ORDER BY node`)
    .map((r) => ({ node: r.node, updatedAt: new Date(r.updated_at).toISOString(), stats: (typeof r.stats === "string" ? JSON.parse(r.stats) : r.stats) as NodeStats }))
  const [timers] = yield* sql<{ n: string; due: string | null }>`
    SELECT count(*)::text AS n, min(deliver_at)::text AS due FROM cluster_messages
    WHERE processed = false AND deliver_at IS NOT NULL AND deliver_at > ${Date.now()}`.pipe(Effect.orElseSucceed(() => []))
  const [backlog] = yield* sql<{ n: string; oldest: string | null }>`
    SELECT count(*)::text AS n, min(id)::text AS oldest FROM cluster_messages
    WHERE processed = false AND (deliver_at IS NULL OR deliver_at <= ${Date.now()})
      AND tag <> 'Cluster/Entity/keepAlive'`.pipe(Effect.orElseSucceed(() => []))
  const partnerWebhooks = yield* Effect.flatMap(InboundWebhooks, (w) => w.recent)
  return {
    access: "full" as const,
    at: new Date().toISOString(),
    runners: runners.map((r) => {
      const heartbeatAgeMs = Math.max(0, Math.round(Number(r.age_ms)))
      return {
        address: r.address,
        healthy: r.healthy,
        state: runnerState(r.healthy, heartbeatAgeMs, expirationMs),
        lastHeartbeat: new Date(r.last_heartbeat).toISOString(),
        heartbeatAgeMs
      }
    }),
    shardOwners: [...owners.values()].sort((a, b) => a.node.localeCompare(b.node))
      .map((o) => ({
        node: o.node,
        pid: nodes.find((n) => n.node === o.node)?.stats.pid ?? null,
        dbSessionPid: o.pid,
        shards: o.shards.length,
        sample: o.shards.slice(0, 5)
      })),
    nodes,
    liveEntities: sumBy(nodes, (s) => s.liveEntities),
    entityActivations: sumBy(nodes, (s) => s.activations),
    entityRestarts: sumBy(nodes, (s) => s.defects),
    pendingTimers: {
      count: Number(timers?.n ?? 0),
      oldestDueAt: timers?.due ? new Date(Number(timers.due)).toISOString() : null
    },
    unprocessedMessages: {
      count: Number(backlog?.n ?? 0),
      oldestAt: backlog?.oldest ? new Date(Snowflake.timestamp(Snowflake.Snowflake(backlog.oldest))).toISOString() : null
    },
    chains: nodes.flatMap((n) => (n.stats.chains ?? []).map((c) => ({ node: n.node, ...c })))
      .sort((a, b) => chainOrder.indexOf(a.chain) - chainOrder.indexOf(b.chain) || a.node.localeCompare(b.node)),
    feeSponsor: nodes.flatMap((n) => (n.stats.feeSponsor === undefined ? [] : [{ node: n.node, ...n.stats.feeSponsor }]))
      .sort((a, b) => (b.checkedAt ?? "").localeCompare(a.checkedAt ?? ""))[0] ?? null,
    partnerWebhooks
  }
})
