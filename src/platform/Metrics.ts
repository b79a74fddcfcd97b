// Application metrics (Effect Metric), exported as Prometheus text by ops/prometheus.ts.
import { Metric, MetricBoundaries, MetricKey } from "effect"

// The HTTP metrics are labelled per request. Effect.tagMetrics would build a new labelled key
// and look it up in the registry on every request (measured: a fifth of /time's throughput), so
// the keys are exported and the middleware keeps one labelled metric per label set.
export const httpRequestsKey = MetricKey.counter("shardline_http_requests_total", {
  description: "HTTP requests answered, by method, route and status",
  incremental: true
})

export const httpLatencyKey = MetricKey.histogram(
  "shardline_http_request_duration_ms",
  MetricBoundaries.exponential({ start: 0.25, factor: 2, count: 14 }),
  "HTTP request latency in milliseconds"
)

export const timerLag = Metric.histogram(
  "shardline_timer_lag_ms",
  MetricBoundaries.exponential({ start: 10, factor: 2, count: 12 }),
  "How late a durable timer ran after its due time, in milliseconds"
)

export const entityActivations = Metric.counter("shardline_entity_activations_total", {
  description: "Entity activations (first start and every restart), by type",
  incremental: true
})

export const entityDefects = Metric.counter("shardline_entity_defects_total", {
  description: "Entity handler defects (each restarts the entity), by type",
  incremental: true
})

export const shardsOwned = Metric.gauge("shardline_shards_owned", {
  description: "Shards this node holds right now (read from its own lock set, unlike effect_cluster_shards)"
})

// Chains, labelled by chain ("ledger", "ethereum", "base", "bsc", "btc", "ltc"); set by ops/ChainMonitor.ts.
export const chainHeight = Metric.gauge("shardline_chain_height", {
  description: "Ledger tip height or EVM block number at the last successful probe, by chain"
})

export const chainUp = Metric.gauge("shardline_chain_up", {
  description: "1 if the chain's node answered the last probe in time, else 0, by chain"
})

export const feeSponsorSats = Metric.gauge("shardline_fee_sponsor_sats", {
  description: "Native coin the fee sponsor can spend (confirmed plus its own pending change), satoshis, as last seen by this node"
})

/** Inbound partner webhook events recorded (the desk pages operations on each). */
export const deskWebhookEvents = Metric.counter("shardline_desk_webhook_events_total", {
  description: "Partner webhook events recorded by the desk, by partner"
})

/** Desk ledger legs found Omni-invalid at final depth (an operator looks; never made again by themselves). */
export const deskLedgerLegsInvalid = Metric.counter("shardline_desk_ledger_legs_invalid_total", {
  description: "Desk ledger legs (sweep, burn, refund, grant) in a block at final depth that our Omni indexer holds invalid, by leg"
})

// Supervision and the cluster as ops watch it (issue 26): set by entity/EntityMetrics.ts and ops/NodeReporter.ts.
export const entityMessages = Metric.counter("shardline_entity_messages_total", {
  description: "Messages handled by entities, by type",
  incremental: true
})

export const entityInFlight = Metric.gauge("shardline_entity_messages_in_flight", {
  description: "Messages being handled by entities of this node right now (their mailbox in hand), by type"
})

export const shardsTotal = Metric.gauge("shardline_shards_total", {
  description: "Shards the cluster has (every group); the sum of shardline_shards_owned over the nodes should equal it"
})

export const runnersByState = Metric.gauge("shardline_runners", {
  description: "Runners registered in the cluster, by state (healthy, unhealthy), as this node last read them"
})

export const timersPending = Metric.gauge("shardline_timers_pending", {
  description: "Durable timers scheduled and not yet run, cluster-wide"
})

export const timersOverdue = Metric.gauge("shardline_timers_overdue_seconds", {
  description: "How long the oldest due but unprocessed durable timer or message has waited, seconds (0 if none)"
})

export const databaseUp = Metric.gauge("shardline_database_up", {
  description: "1 if this node's last report to Postgres succeeded within its timeout, else 0"
})

export const databaseConnections = Metric.gauge("shardline_db_connections", {
  description: "This node's Postgres connections by state (active, idle, idle in transaction), from pg_stat_activity"
})

export const databasePoolSize = Metric.gauge("shardline_db_pool_size", {
  description: "Postgres connections this node's pool may open (SHARDLINE_DB_POOL_SIZE)"
})

export const followerLag = Metric.gauge("shardline_chain_follower_lag_blocks", {
  description: "Blocks a chain follower is behind the chain's tip, by follower (omni: the Omni view over the ledger)"
})
