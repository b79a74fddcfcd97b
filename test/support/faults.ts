// What the fault tests share: polling until a probe yields a value, our own Omni indexer over a
// chain that outlives the nodes, the operator's first steps on that chain, and which node owns
// which shard.
import { Effect } from "effect"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { makeRpcLedger } from "../../src/chain/ledger/rpcLedger.ts"
import type { UtxoLedgerShape } from "../../src/chain/ledger/UtxoLedger.ts"
import { ECOSYSTEM_MAIN } from "../../src/chain/omni/codec.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import type { TestDatabase } from "../../harness/db.ts"
import type { NodeProcess } from "../../harness/nodeProcess.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { omniChainIndex } from "./omniChainIndex.ts"
import { waitFor } from "./waitFor.ts"

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export { waitFor }

/** Our own indexer over the node's chain (test/support/omniChainIndex.ts). */
export { omniChainIndex as chainIndex }

/**
 * The shared ledger (litecoind at `url`) once a node runs on it, as an operator readies it: the
 * node's fee sponsor gets `sponsorBlocks` coinbases, a fresh issuer one, and they mature; `issue`
 * creates a managed Omni property and answers its id, read from our own index of the chain.
 */
export const readyOmniIssuer = async (url: string, db: TestDatabase, sponsorBlocks: number) => {
  const ledger = makeRpcLedger({ url, params: ledgerParams, nodeParams: litecoinRegtestParams })
  const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
  const burn = randomLedgerKey().address
  const sponsor = await waitFor("the fee sponsor's wallet", 30_000, async () =>
    (await db.query<{ address: string }>(`SELECT address FROM system_wallets WHERE name = 'fee-sponsor'`))[0]?.address)
  const issuer = randomLedgerKey()
  await run(ledger.mine(sponsorBlocks, sponsor))
  await run(ledger.mine(1, issuer.address))
  await run(ledger.mine(ledgerParams.coinbaseMaturity, burn))
  const chain = omniChainIndex()
  const issuerWallet = makeKeyWallet(ledger, issuer.privateKey)
  const issue = (name: string) => issueManaged(ledger, issuerWallet, chain, burn, name)
  return { ledger, run, burn, chain, issuerWallet, issue }
}

/** A managed Omni property created by `issuerWallet`, mined, and its id read from our own index. */
export const issueManaged = async (
  ledger: UtxoLedgerShape,
  issuerWallet: ReturnType<typeof makeKeyWallet>,
  chain: ReturnType<typeof omniChainIndex>,
  burn: string,
  name: string
): Promise<number> => {
  const txid = await Effect.runPromise(issuerWallet.omni({ type: "createManaged", ecosystem: ECOSYSTEM_MAIN, divisible: true, previousPropertyId: 0, category: "", subcategory: "", name, url: "", data: "" }))
  await Effect.runPromise(ledger.mine(1, burn))
  await Effect.runPromise(syncOnce(ledger, chain.consumer))
  return chain.records.find((r) => r.txid === txid)!.propertyId!
}

/** Shard number → owning node (its application_name), from the advisory locks each runner's connection holds. */
export const shardOwners = async (db: TestDatabase, shardsTotal = 300): Promise<Map<number, string>> => {
  const rows = await db.query<{ shard: number; node: string }>(`
    SELECT (l.objid::bigint - 1000000)::int AS shard, a.application_name AS node
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.objid::bigint BETWEEN 1000001 AND ${1_000_000 + shardsTotal}`)
  return new Map(rows.map((r) => [r.shard, r.node]))
}

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
