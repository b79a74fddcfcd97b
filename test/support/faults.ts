// What the fault tests share: polling until a probe yields a value, our own Omni indexer over a
// chain that outlives the nodes, the operator's first steps on that chain, and which node owns
// which shard.
import type { TestDatabase } from "../../harness/db.ts"
import type { NodeProcess } from "../../harness/nodeProcess.ts"
import { omniChainIndex } from "./omniChainIndex.ts"
import { waitFor } from "./waitFor.ts"

// The operator's first steps on a shared ledger live in harness/ (the chaos campaign uses them too).
export { issueManaged, readyOmniIssuer, shardOwners } from "../../harness/omniIssuer.ts"

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export { waitFor }

/** Our own indexer over the node's chain (test/support/omniChainIndex.ts). */
export { omniChainIndex as chainIndex }

/**
 * The desk's kill -9 step: waits until a leg matching `where` (SQL over desk_order_legs) is
 * recorded, calling `step` between looks (mining, so the orders move), kills `victim` with
 * SIGKILL, and answers how many such legs were recorded when it died. The caller starts the
 * survivor.
 */
export const killOnceDeskLegRecorded = async (
  db: TestDatabase,
  victim: NodeProcess,
  options: { readonly where: string; readonly label: string; readonly timeoutMs: number; readonly intervalMs: number; readonly step?: () => Promise<unknown> }
): Promise<number> => {
  const count = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM desk_order_legs WHERE ${options.where}`))[0]!.n
  await waitFor(options.label, options.timeoutMs, async () => {
    if ((await count()) > 0) return true
    await options.step?.()
    return undefined
  }, options.intervalMs)
  victim.child.kill("SIGKILL")
  await victim.exited
  return count()
}

/** Every desk leg recorded so far (what a kill -9 test reports at the kill). */
export const killedLegs = async (db: TestDatabase): Promise<number> =>
  (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM desk_order_legs"))[0]!.n
