// The operator's first steps on a ledger that outlives the nodes (litecoind), and which node owns
// which shard: shared by the kill -9 tests (test/support/faults.ts) and the chaos campaign.
import { Effect } from "effect"
import { syncOnce } from "../src/chain/ledger/follower.ts"
import { makeKeyWallet } from "../src/chain/ledger/keyWallet.ts"
import { makeRpcLedger } from "../src/chain/ledger/rpcLedger.ts"
import type { UtxoLedgerShape } from "../src/chain/ledger/UtxoLedger.ts"
import { ECOSYSTEM_MAIN } from "../src/chain/omni/codec.ts"
import { ledgerParams, litecoinRegtestParams } from "../src/chain/params.ts"
import type { TestDatabase } from "./db.ts"
import { omniChainIndex } from "./omniChainIndex.ts"
import { randomLedgerKey } from "./walletServices.ts"

/** Polls `probe` every `everyMs` until it answers a value; throws after `timeoutMs`, naming `what`. */
export const pollFor = async <A>(what: string, timeoutMs: number, probe: () => Promise<A | undefined>, everyMs = 200): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/**
 * The shared ledger (litecoind at `url`) once a node runs on it, as an operator readies it: the
 * node's fee sponsor gets `sponsorBlocks` coinbases, a fresh issuer one, and they mature; `issue`
 * creates a managed Omni property and answers its id, read from our own index of the chain.
 */
export const readyOmniIssuer = async (url: string, db: Pick<TestDatabase, "query">, sponsorBlocks: number) => {
  const ledger = makeRpcLedger({ url, params: ledgerParams, nodeParams: litecoinRegtestParams })
  const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
  const burn = randomLedgerKey().address
  const sponsor = await pollFor("the fee sponsor's wallet", 30_000, async () =>
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
export const shardOwners = async (db: Pick<TestDatabase, "query">, shardsTotal = 300): Promise<Map<number, string>> => {
  const rows = await db.query<{ shard: number; node: string }>(`
    SELECT (l.objid::bigint - 1000000)::int AS shard, a.application_name AS node
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.objid::bigint BETWEEN 1000001 AND ${1_000_000 + shardsTotal}`)
  return new Map(rows.map((r) => [r.shard, r.node]))
}

