// How a process joins the cluster. Every sharding setting is passed explicitly through
// ShardingConfig.layer. The stock SingleRunner/NodeClusterSocket layers are composed here by hand
// because they call ShardingConfig.layerFromEnv, which reads plain HOST, PORT, SHARDS_PER_GROUP...
// (and fails on a junk PORT): see notes/effect-cluster-brief.md, "Env leakage".
import { RunnerHealth, Runners, Sharding, ShardingConfig, SocketRunner, SqlMessageStorage } from "@effect/cluster"
import { NodeClusterSocket } from "@effect/platform-node"
import { RpcSerialization } from "@effect/rpc"
import { Layer } from "effect"
import type { AppConfigShape } from "../src/platform/Config.ts"
import { shardingConfig } from "../src/platform/ShardingSettings.ts"
import * as PatientLocks from "../src/platform/database/patientLocks.ts"

export { shardingConfig, storageClient } from "../src/platform/ShardingSettings.ts"

/** Runner storage patient with a slow round trip, its lock connection closed, never pooled, when replaced (patientLocks.ts, lockSessions.ts). */
const runnerStorage = (config: AppConfigShape) => PatientLocks.layer(shardingConfig(config, true))

/** Embedded: one process owns every shard; SQL message and runner storage (as SingleRunner.layer). */
export const single = (config: AppConfigShape) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide([runnerStorage(config), RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer(shardingConfig(config, true)))
  )

/** Multi-node: a runner reachable by its peers over TCP; SQL storage; ping health checks
 * (as NodeClusterSocket.layer with storage "sql" and runnerHealth "ping"). */
export const socket = (config: AppConfigShape) =>
  Layer.provide(SocketRunner.layer, [NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]).pipe(
    Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(NodeClusterSocket.layerClientProtocol))),
    Layer.provideMerge(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide(runnerStorage(config)),
    Layer.provide(ShardingConfig.layer(shardingConfig(config, true))),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
