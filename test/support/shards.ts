// Which in-process node holds which shard, and entity ids that land on a given node: what the
// tests of two nodes on one database need to aim a message at a peer or at the node itself.
import { EntityId, Sharding, ShardId } from "@effect/cluster"
import { Effect } from "effect"
import type { RunningNode } from "./node.ts"

/** How many shards of the default group `node` holds now (its acquired shard locks). */
export const shardsHeld = (node: RunningNode) =>
  node.run(Effect.map(Sharding.Sharding, (s) => {
    let held = 0
    for (let i = 1; i <= node.config.shardsPerGroup; i++) if (s.hasShardId(ShardId.make("default", i))) held++
    return held
  }))

/** The first of `candidates` whose shard (default group) `node` holds now; undefined if none. */
export const idOnShardOf = (node: RunningNode, candidates: ReadonlyArray<string>) =>
  node.run(Effect.map(Sharding.Sharding, (s) => candidates.find((id) => s.hasShardId(s.getShardId(EntityId.make(id), "default")))))

/** Every node holds shards and together they hold all of them (the cluster has settled); else undefined. */
export const shardsSettled = async (nodes: ReadonlyArray<RunningNode>) => {
  const held = await Promise.all(nodes.map(shardsHeld))
  return held.every((n) => n > 0) && held.reduce((a, b) => a + b, 0) === nodes[0]!.config.shardsPerGroup ? held : undefined
}
