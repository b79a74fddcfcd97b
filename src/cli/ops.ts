// ops [--json]: the same view as GET /ops, read straight from Postgres.
import { readOpsView } from "../platform/ops/OpsView.ts"
import { runCommand } from "./runtime.ts"

export const run = async (args: ReadonlyArray<string>): Promise<number> =>
  runCommand(readOpsView, (view) => {
    if (args.includes("--json")) return console.log(JSON.stringify(view, null, 2))
    console.log(`runners:`)
    for (const r of view.runners) console.log(`  ${r.address}  ${r.healthy ? "healthy" : "UNHEALTHY"}  heartbeat ${r.lastHeartbeat}`)
    console.log(`shard owners:`)
    for (const o of view.shardOwners) console.log(`  ${o.node} (pid ${o.pid}): ${o.shards} shards`)
    console.log(`live entities: ${JSON.stringify(view.liveEntities)}`)
    console.log(`entity activations: ${JSON.stringify(view.entityActivations)}  restarts after defects: ${JSON.stringify(view.entityRestarts)}`)
    console.log(`pending timers: ${view.pendingTimers.count} (next due ${view.pendingTimers.oldestDueAt ?? "-"})`)
    console.log(`unprocessed messages: ${view.unprocessedMessages.count} (oldest ${view.unprocessedMessages.oldestAt ?? "-"})`)
  })
