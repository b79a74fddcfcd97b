// ops [--json]: the same view as GET /ops, read straight from Postgres (chains as each node last
// reported them).
import { Effect } from "effect"
import * as DeskInboundWebhooks from "../desk/webhooks/inboundLog.ts"
import { type OpsView, readOpsView } from "../platform/ops/OpsView.ts"
import { runCommand } from "./runtime.ts"

export const run = async (args: ReadonlyArray<string>): Promise<number> =>
  runCommand(Effect.provide(readOpsView, DeskInboundWebhooks.layer), (view) => {
    if (args.includes("--json")) return console.log(JSON.stringify(view, null, 2))
    console.log(`runners:`)
    for (const r of view.runners) console.log(`  ${r.address}  ${r.state === "healthy" ? "healthy" : r.state.toUpperCase()}  heartbeat ${r.lastHeartbeat} (${(r.heartbeatAgeMs / 1000).toFixed(1)} s ago)`)
    console.log(`shard owners:`)
    for (const o of view.shardOwners) console.log(`  ${o.node} (pid ${o.pid ?? "not reported yet"}): ${o.shards} shards`)
    console.log(`live entities: ${JSON.stringify(view.liveEntities)}`)
    console.log(`entity activations: ${JSON.stringify(view.entityActivations)}  restarts after defects: ${JSON.stringify(view.entityRestarts)}`)
    console.log(`pending timers: ${view.pendingTimers.count} (next due ${view.pendingTimers.oldestDueAt ?? "-"})`)
    console.log(`unprocessed messages: ${view.unprocessedMessages.count} (oldest ${view.unprocessedMessages.oldestAt ?? "-"})`)
    console.log(`chains:`)
    for (const c of view.chains) console.log(`  ${c.chain.padEnd(9)} ${c.kind.padEnd(7)} ${chainState(c).padEnd(32)} ${c.node}`)
    const sponsor = view.feeSponsor
    console.log(`fee sponsor: ${sponsor === null ? "not reported yet" : `${sponsor.address} ${sponsor.sats === null ? "balance unknown" : `${sponsor.sats} sat spendable`} (${sponsor.node}, ${sponsor.checkedAt ?? "never read"})`}`)
  })

const chainState = (c: OpsView["chains"][number]): string => {
  if (!c.available) return `UNAVAILABLE (${c.error ?? "no answer"})`
  return c.chainId === undefined ? `height ${c.height}` : `block ${c.height}  chain id ${c.chainId}`
}
