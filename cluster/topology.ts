// How a process joins the cluster. Every sharding setting is passed explicitly through
// ShardingConfig.layer. The stock SingleRunner/NodeClusterSocket layers are composed here by hand
// because they call ShardingConfig.layerFromEnv, which reads plain HOST, PORT, SHARDS_PER_GROUP...
// (and fails on a junk PORT): see notes/effect-cluster-brief.md, "Env leakage".
import { MessageStorage, RunnerAddress, RunnerHealth, Runners, Sharding, ShardingConfig, SocketRunner, SqlMessageStorage, SqlRunnerStorage } from "@effect/cluster"
import { NodeClusterSocket } from "@effect/platform-node"
import { RpcSerialization } from "@effect/rpc"
import type { SqlClient } from "@effect/sql"
import { Duration, Layer, Option } from "effect"
import type { AppConfigShape } from "../src/platform/Config.ts"

/** The full sharding config for this process; `runner: false` makes a client-only process. */
export const shardingConfig = (config: AppConfigShape, runner: boolean): ShardingConfig.ShardingConfig["Type"] => ({
  ...ShardingConfig.defaults,
  runnerAddress: runner ? Option.some(RunnerAddress.make(config.runnerHost, config.runnerPort)) : Option.none(),
  runnerListenAddress: runner ? Option.some(RunnerAddress.make(config.runnerHost, config.runnerPort)) : Option.none(),
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

/** Embedded: one process owns every shard; SQL message and runner storage (as SingleRunner.layer). */
export const single = (config: AppConfigShape) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide([Layer.orDie(SqlRunnerStorage.layer), RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer(shardingConfig(config, true)))
  )

/** Multi-node: a runner reachable by its peers over TCP; SQL storage; ping health checks
 * (as NodeClusterSocket.layer with storage "sql" and runnerHealth "ping"). */
export const socket = (config: AppConfigShape) =>
  Layer.provide(SocketRunner.layer, [NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]).pipe(
    Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(NodeClusterSocket.layerClientProtocol))),
    Layer.provideMerge(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide(Layer.orDie(SqlRunnerStorage.layer)),
    Layer.provide(ShardingConfig.layer(shardingConfig(config, true))),
    Layer.provide(RpcSerialization.layerMsgPack)
  )

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
