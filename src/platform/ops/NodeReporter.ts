// Background duties of every node: report its live entities, shard count and chains to ops_nodes
// (so any node's /ops shows the whole cluster), prune processed cluster messages older than the
// configured age, and drop expired rate-limit windows.
import { ShardId, Sharding, Snowflake } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Metric, MetricState, Schedule } from "effect"
import { AppConfig } from "../Config.ts"
import {
  databaseConnections, databasePoolSize, databaseUp, followerLag, runnersByState, shardsOwned, shardsTotal, timersOverdue, timersPending
} from "../Metrics.ts"
import { lastDefectsByType } from "../entity/EntityMetrics.ts"
import { listenerTotals } from "../http/httpMetrics.ts"
import { OmniView } from "../ledger/OmniView.ts"
import { NodeIdentity } from "../NodeIdentity.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { ChainMonitor } from "./ChainMonitor.ts"
import { FeeSponsor } from "../ledger/FeeSponsor.ts"
import { type NodeStats, shardGroups } from "./OpsView.ts"
import { giveUp, initialWatch, observe, sharedDatabase } from "./ShardWatchdog.ts"

export const reportIntervalMs = 2000
/** A report whose statements take longer than this counts as the database being down. */
export const reportTimeoutMs = 3000
export const pruneInterval = Duration.minutes(5)
/** Rows deleted per prune statement, so pruning never holds long locks. */
export const pruneBatchMax = 5000

const byTag = (name: string, tag: string): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const pair of Metric.unsafeSnapshot()) {
    if (pair.metricKey.name !== name) continue
    const key = pair.metricKey.tags.find((t) => t.key === tag)?.value ?? "unknown"
    const s = pair.metricState
    const v = MetricState.isGaugeState(s) ? Number(s.value) : MetricState.isCounterState(s) ? Number(s.count) : 0
    out[key] = (out[key] ?? 0) + v
  }
  return out
}

/** Timers run by how late, cumulative per upper bound in ms (Effect's histogram), over every entity type. */
const timerLagBuckets = (): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const pair of Metric.unsafeSnapshot()) {
    if (pair.metricKey.name !== "shardline_timer_lag_ms" || !MetricState.isHistogramState(pair.metricState)) continue
    for (const [le, count] of pair.metricState.buckets) out[String(le)] = (out[String(le)] ?? 0) + count
  }
  return out
}

export const localStats = (sharding: Sharding.Sharding["Type"], shardsPerGroup: number): NodeStats => {
  let shards = 0
  for (const group of shardGroups) {
    for (let i = 1; i <= shardsPerGroup; i++) if (sharding.hasShardId(ShardId.make(group, i))) shards++
  }
  return {
    liveEntities: byTag("effect_cluster_entities", "type"),
    activations: byTag("shardline_entity_activations_total", "type"),
    defects: byTag("shardline_entity_defects_total", "type"),
    messages: byTag("shardline_entity_messages_total", "type"),
    inFlight: byTag("shardline_entity_messages_in_flight", "type"),
    lastDefects: lastDefectsByType(),
    timerLag: timerLagBuckets(),
    http: listenerTotals(),
    shards,
    pid: process.pid
  }
}

/** What a node reads of the cluster each report, for /metrics (alerts) and its own stats. */
const clusterProbe = (node: string, heartbeatExpiryMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = Date.now()
    // As the cluster counts them: a runner whose heartbeat is older than the lock expiration has
    // left the ring (a kill -9 leaves its row behind, still marked healthy when the health check
    // died with it), so it is neither healthy nor unhealthy here: it is gone.
    const runners = yield* sql<{ healthy: number; unhealthy: number }>`
      SELECT count(*) FILTER (WHERE healthy)::int AS healthy, count(*) FILTER (WHERE NOT healthy)::int AS unhealthy FROM cluster_runners
      WHERE last_heartbeat > now() - make_interval(secs => ${Math.ceil(heartbeatExpiryMs / 1000)})`
    const timers = yield* sql<{ pending: number; due: string | null; oldest: string | null }>`
      SELECT count(*) FILTER (WHERE deliver_at > ${now})::int AS pending,
        min(deliver_at) FILTER (WHERE deliver_at <= ${now})::text AS due,
        min(id) FILTER (WHERE deliver_at IS NULL AND tag <> 'Cluster/Entity/keepAlive')::text AS oldest
      FROM cluster_messages WHERE processed = false`
    const connections = yield* sql<{ state: string; n: number }>`
      SELECT coalesce(state, 'unknown') AS state, count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${node} GROUP BY 1`
    const t = timers[0]
    const waitedSince = Math.min(
      t?.due ? Number(t.due) : now,
      t?.oldest ? Snowflake.timestamp(Snowflake.Snowflake(t.oldest)) : now
    )
    return {
      runners: runners[0] ?? { healthy: 0, unhealthy: 0 },
      pendingTimers: t?.pending ?? 0,
      overdueSeconds: Math.max(0, now - waitedSince) / 1000,
      connections: Object.fromEntries(connections.map((c) => [c.state, c.n]))
    }
  })

/** Deletes processed messages (and their replies) older than `age`. Returns rows removed. */
export const pruneClusterMessages = (age: Duration.Duration) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cutoffMs = Date.now() - Duration.toMillis(age)
    if (cutoffMs <= Snowflake.constEpochMillis) return 0
    const cutoff = (BigInt(cutoffMs - Snowflake.constEpochMillis) << 22n).toString()
    const rows = yield* sql<{ n: string }>`
      WITH old AS (
        SELECT id, request_id FROM cluster_messages WHERE processed = true AND id < ${cutoff}::bigint LIMIT ${pruneBatchMax}
      ), r AS (
        DELETE FROM cluster_replies WHERE request_id IN (SELECT request_id FROM old) RETURNING 1
      ), m AS (
        DELETE FROM cluster_messages WHERE id IN (SELECT id FROM old) RETURNING 1
      )
      SELECT ((SELECT count(*) FROM r) + (SELECT count(*) FROM m))::text AS n`
    return Number(rows[0]?.n ?? 0)
  })

export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sharding = yield* Sharding.Sharding
  const config = yield* AppConfig
  const node = yield* NodeIdentity
  const limiter = yield* RateLimiter
  const chains = yield* ChainMonitor
  const sponsor = yield* FeeSponsor
  const omni = yield* OmniView
  let watch = initialWatch
  const expectedShards = config.shardsPerGroup * shardGroups.length
  shardsTotal.unsafeUpdate(expectedShards, [])
  databasePoolSize.unsafeUpdate(config.poolSize, [])
  // Logged once when a single node finds it shares its database, and once when it is alone again.
  let sharing: string | undefined
  const noteSharing = (liveRunners: number) => Effect.suspend(() => {
    const now = sharedDatabase(liveRunners)
    if ((now === undefined) === (sharing === undefined)) return Effect.void
    sharing = now
    return now === undefined ? Effect.logInfo("this single node is the only runner on its database again") : Effect.logError(now)
  })
  const setDatabaseUp = (up: boolean) => Effect.sync(() => databaseUp.unsafeUpdate(up ? 1 : 0, []))
  const report = Effect.gen(function*() {
    const latestChains = yield* chains.latest
    const tip = latestChains.find((c) => c.chain === "ledger")?.height ?? null
    const lag = tip === null ? null : Math.max(0, tip - (yield* omni.height))
    const probe = yield* clusterProbe(node.name, config.shardLockExpirationMs)
    const stats: NodeStats = {
      ...localStats(sharding, config.shardsPerGroup),
      chains: latestChains,
      feeSponsor: yield* sponsor.latest,
      db: { connections: probe.connections, poolSize: config.poolSize },
      followerLag: lag
    }
    shardsOwned.unsafeUpdate(stats.shards, [])
    runnersByState.pipe(Metric.tagged("state", "healthy")).unsafeUpdate(probe.runners.healthy, [])
    runnersByState.pipe(Metric.tagged("state", "unhealthy")).unsafeUpdate(probe.runners.unhealthy, [])
    timersPending.unsafeUpdate(probe.pendingTimers, [])
    timersOverdue.unsafeUpdate(probe.overdueSeconds, [])
    for (const state of ["active", "idle", "idle in transaction"]) {
      databaseConnections.pipe(Metric.tagged("state", state)).unsafeUpdate(probe.connections[state] ?? 0, [])
    }
    if (lag !== null) followerLag.pipe(Metric.tagged("follower", "omni")).unsafeUpdate(lag, [])
    if (config.topology === "single") yield* noteSharing(probe.runners.healthy + probe.runners.unhealthy)
    yield* sql`INSERT INTO ops_nodes (node, stats, updated_at) VALUES (${node.name}, ${JSON.stringify(stats)}::jsonb, now())
      ON CONFLICT (node) DO UPDATE SET stats = EXCLUDED.stats, updated_at = now()`
  }).pipe(
    Effect.timeoutFail({ duration: Duration.millis(reportTimeoutMs), onTimeout: () => new Error(`no answer within ${reportTimeoutMs} ms`) }),
    Effect.tapBoth({ onFailure: () => setDatabaseUp(false), onSuccess: () => setDatabaseUp(true) })
  )
  // Its own fiber, with no I/O: the report's write can hang on a pool that lost its database. A
  // single runner short of shards for the whole limit is a zombie whatever the reason (lost locks,
  // a pool that never recovers, an external database down that long); a restart is what heals it.
  const watchShards = Effect.suspend(() => {
    const owned = localStats(sharding, config.shardsPerGroup).shards
    watch = observe(watch, owned, expectedShards, Date.now(), config.shardWatchdogMs)
    return watch.giveUp
      ? giveUp(`this node has held ${owned} of its ${expectedShards} shards for ${config.shardWatchdogMs} ms; exiting with code 1 so it is restarted`)
      : Effect.void
  })
  if (config.topology === "single") {
    yield* watchShards.pipe(
      Effect.repeat({ schedule: Schedule.spaced(Duration.millis(reportIntervalMs)), until: () => watch.giveUp }),
      Effect.forkScoped
    )
  }
  yield* report.pipe(
    Effect.catchAllCause((c) => Effect.logWarning("ops report failed", c)),
    Effect.repeat(Schedule.spaced(Duration.millis(reportIntervalMs))),
    Effect.forkScoped
  )
  const prune = Effect.gen(function*() {
    const n = yield* pruneClusterMessages(config.pruneMessagesOlderThan)
    yield* limiter.prune
    if (n > 0) yield* Effect.logInfo(`pruned ${n} processed cluster message rows`)
  })
  yield* prune.pipe(
    Effect.catchAllCause((c) => Effect.logWarning("prune failed", c)),
    Effect.repeat(Schedule.spaced(pruneInterval)),
    Effect.forkScoped
  )
  yield* Effect.addFinalizer(() => sql`DELETE FROM ops_nodes WHERE node = ${node.name}`.pipe(Effect.ignore))
}))
