// Background duties of every node: report its live entities, shard count and chains to ops_nodes
// (so any node's /ops shows the whole cluster), prune processed cluster messages older than the
// configured age, and drop expired rate-limit windows.
import { ShardId, Sharding, Snowflake } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Metric, MetricState, Schedule } from "effect"
import { AppConfig } from "../Config.ts"
import { shardsOwned } from "../Metrics.ts"
import { NodeIdentity } from "../NodeIdentity.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { ChainMonitor } from "./ChainMonitor.ts"
import { FeeSponsor } from "../ledger/FeeSponsor.ts"
import { type NodeStats, shardGroups } from "./OpsView.ts"
import { giveUp, initialWatch, observe } from "./ShardWatchdog.ts"

export const reportIntervalMs = 2000
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

export const localStats = (sharding: Sharding.Sharding["Type"], shardsPerGroup: number): NodeStats => {
  let shards = 0
  for (const group of shardGroups) {
    for (let i = 1; i <= shardsPerGroup; i++) if (sharding.hasShardId(ShardId.make(group, i))) shards++
  }
  return {
    liveEntities: byTag("effect_cluster_entities", "type"),
    activations: byTag("shardline_entity_activations_total", "type"),
    defects: byTag("shardline_entity_defects_total", "type"),
    shards,
    pid: process.pid
  }
}

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
  let watch = initialWatch
  const expectedShards = config.shardsPerGroup * shardGroups.length
  const report = Effect.gen(function*() {
    const stats: NodeStats = { ...localStats(sharding, config.shardsPerGroup), chains: yield* chains.latest, feeSponsor: yield* sponsor.latest }
    shardsOwned.unsafeUpdate(stats.shards, [])
    yield* sql`INSERT INTO ops_nodes (node, stats, updated_at) VALUES (${node.name}, ${JSON.stringify(stats)}::jsonb, now())
      ON CONFLICT (node) DO UPDATE SET stats = EXCLUDED.stats, updated_at = now()`
  })
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
