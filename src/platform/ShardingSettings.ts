// Every sharding setting, passed explicitly (the stock layers would read plain HOST, PORT,
// SHARDS_PER_GROUP from the environment: notes/effect-cluster-brief.md, "Env leakage"), and the
// storage-only client the CLI uses. The runner topologies that use these live in cluster/.
import { MessageStorage, RunnerAddress, RunnerHealth, Runners, Sharding, ShardingConfig, SqlMessageStorage, SqlRunnerStorage } from "@effect/cluster"
import type { SqlClient } from "@effect/sql"
import { Duration, Layer, Option } from "effect"
import type { AppConfigShape } from "./Config.ts"

/** The full sharding config for this process; `runner: false` makes a client-only process. */
export const shardingConfig = (config: AppConfigShape, runner: boolean): ShardingConfig.ShardingConfig["Type"] => ({
  ...ShardingConfig.defaults,
  runnerAddress: runner ? Option.some(RunnerAddress.make(config.runnerHost, config.runnerPort)) : Option.none(),
  // Peers dial runnerAddress; the runner binds runnerListenAddress (another port behind a proxy).
  runnerListenAddress: runner ? Option.some(RunnerAddress.make(config.runnerHost, Option.getOrElse(config.runnerListenPort, () => config.runnerPort))) : Option.none(),
  runnerShardWeight: 1,
  availableShardGroups: ["default"],
  assignedShardGroups: ["default"],
  // Fixed for the life of the cluster: changing it re-homes every entity.
  shardsPerGroup: config.shardsPerGroup,
  // Failover ≈ min(health check + ~2.5 s of ping retries, heartbeat expiry) + one poll. The
  // health check runs on one node only (a singleton): when it dies with the victim, only the
  // heartbeat path is left, hence the short expiry. Measured 3.4–5.7 s (docs/operations.md).
  shardLockRefreshInterval: Duration.millis(config.shardLockRefreshMs),
  shardLockExpiration: Duration.millis(config.shardLockExpirationMs),
  shardLockDisableAdvisory: false,
  preemptiveShutdown: true,
  entityMailboxCapacity: 4096,
  entityMaxIdleTime: Duration.minutes(1),
  entityRegistrationTimeout: Duration.minutes(1),
  entityTerminationTimeout: Duration.seconds(15),
  // Durable timers fire on the next storage poll after they are due: this is their resolution.
  entityMessagePollInterval: Duration.millis(config.entityMessagePollMs),
  entityReplyPollInterval: Duration.millis(200),
  refreshAssignmentsInterval: Duration.seconds(1),
  sendRetryInterval: Duration.millis(100),
  runnerHealthCheckInterval: Duration.millis(config.runnerHealthCheckMs),
  simulateRemoteSerialization: false
})

/**
 * A client that owns no shards and opens no sockets (the CLI): a persisted message is written
 * to storage, the owning runner picks it up on its next poll, and the reply is read back from
 * storage. Works the same against the embedded runner and a multi-node cluster.
 */
export const storageClient = (config: AppConfigShape): Layer.Layer<Sharding.Sharding | MessageStorage.MessageStorage, never, SqlClient.SqlClient> =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide([Layer.orDie(SqlRunnerStorage.layer), RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer(shardingConfig(config, false)))
  )
