// `npm run bench -- settlement`: how fast one delegated address signs settlement legs. The
// delegated wallet of the Authorization entity (DelegatedWallet.ts) against the machine's Postgres
// and an in-process ledger devnet, without the cluster around it: SignLegs batches of legs read,
// built (Omni simple sends chained on the address's own change), stored in one UPDATE, broadcast,
// and marked broadcast; the fee coin comes from the fee sponsor. Beside it, the in-memory part
// alone (coin pool + builder) and the block that carries every leg, indexed by the Omni view.
// Prints a table and writes bench/results/settlement.json; never fails on timing.
//
// Knobs: BENCH_SETTLEMENT_BATCHES (default 8), BENCH_SETTLEMENT_BATCH (legs per SignLegs, default 500).
import { Effect, Either } from "effect"
import { SqlClient } from "@effect/sql"
import { poolOf } from "../src/chain/ledger/coinPool.ts"
import { devnetDollar, devnetFaucet } from "../src/chain/ledger/devnetFaucet.ts"
import { UtxoLedger } from "../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams as params } from "../src/chain/params.ts"
import { addressScript, buildOmni } from "../src/chain/txBuilder.ts"
import { makeDelegatedWallet } from "../src/exchange/authorization/DelegatedWallet.ts"
import * as FeeSponsor from "../src/platform/ledger/FeeSponsor.ts"
import { OmniView } from "../src/platform/ledger/OmniView.ts"
import { createTestDatabase } from "../harness/db.ts"
import { fundedDevnet, randomLedgerKey, seedLegs, walletServices } from "../harness/walletServices.ts"
import { envInt, printTable, writeResults, type Row } from "./report.ts"

const batches = envInt("BENCH_SETTLEMENT_BATCHES", 8)
const batchSize = envInt("BENCH_SETTLEMENT_BATCH", 500)
/** Legs built in memory for the builder-only figure. */
const BUILD_ONLY = 2_000
const perSecond = (count: number, ms: number): number => Math.round((count * 1000) / Math.max(ms, 1e-3))


const measure = Effect.gen(function*() {
  const ledger = yield* UtxoLedger
  const view = yield* OmniView
  const sponsor = yield* FeeSponsor.FeeSponsor
  const me = randomLedgerKey()
  const total = batches * batchSize
  yield* seedLegs({ asset: "DUSD", property: devnetDollar.propertyId, grantId: "bench", delegated: me.address, legs: total, amount: 1000n, toAddress: randomLedgerKey().address })
  const faucet = devnetFaucet(ledger)
  yield* faucet.omni({ type: "simpleSend", property: devnetDollar.propertyId, amount: BigInt(total) * 1000n }, me.address)
  yield* ledger.mine(1, faucet.address)

  // SignLegs as the entity runs it: one wallet, batches in turn.
  const wallet = yield* makeDelegatedWallet(me.address, me.privateKey)
  const t0 = performance.now()
  const times: number[] = []
  for (let b = 0; b < batches; b++) {
    const refs = Array.from({ length: batchSize }, (_, i) => ({ tradeId: String(b * batchSize + i + 1), leg: "base" as const }))
    const s = performance.now()
    const signed = yield* wallet.signLegs("bench", refs)
    times.push(performance.now() - s)
    if (signed.length !== batchSize) return yield* Effect.dieMessage(`batch ${b}: ${signed.length} legs signed of ${batchSize}`)
  }
  const signMs = performance.now() - t0
  const sql = yield* SqlClient.SqlClient
  const [counts] = yield* sql<{ broadcast: string; fundings: string }>`SELECT
    (SELECT count(*) FROM settlement_legs WHERE status = 'broadcast')::text AS broadcast,
    (SELECT count(*) FROM fee_sponsor_txs WHERE to_address = ${me.address})::text AS fundings`

  // Every leg in one block, then indexed by the node's Omni view.
  const m0 = performance.now()
  yield* ledger.mine(1, faucet.address)
  const mineMs = performance.now() - m0
  const v0 = performance.now()
  yield* view.sync
  const indexMs = performance.now() - v0
  const [sample] = yield* sql<{ txid: string }>`SELECT txid FROM settlement_legs ORDER BY trade_id DESC LIMIT 1`
  const judged = yield* view.tx(sample!.txid)
  if (judged?.valid !== true) return yield* Effect.dieMessage(`the last leg was not judged valid: ${JSON.stringify(judged)}`)

  // The in-memory part alone: the coin pool picking, the builder signing, the pool taking the change.
  const other = randomLedgerKey()
  const otherScript = Either.getOrThrow(addressScript(other.address, params))
  yield* sponsor.fund(other.address, 1, 2_000_000_000n / 100n)
  const pool = poolOf({ script: otherScript, confirmed: [], own: [], incoming: [{ hex: (yield* ledger.getTx((yield* sql<{ txid: string }>`SELECT txid FROM fee_sponsor_txs WHERE to_address = ${other.address}`)[0]!.txid)).hex }] }, params)
  const b0 = performance.now()
  for (let i = 0; i < BUILD_ONLY; i++) {
    const inputs = pool.pick(params.dustSats + 300n, 150n, 1_000_000)!
    const tx = Either.getOrThrow(buildOmni(params, { inputs, signer: { privateKey: other.privateKey }, changeAddress: other.address, payload: { type: "simpleSend", property: 3, amount: 1n }, reference: me.address }))
    pool.spend(tx.hex)
  }
  const buildMs = performance.now() - b0

  const sorted = [...times].sort((a, b) => a - b)
  return {
    rows: [
      { metric: `legs signed, stored and broadcast (SignLegs of ${batchSize}, one address, ${batches} batches)`, perSecond: perSecond(total, signMs) },
      { metric: "legs built and signed in memory (coin pool + builder, chained change)", perSecond: perSecond(BUILD_ONLY, buildMs) },
      { metric: `legs mined in one block (${total} transactions)`, perSecond: perSecond(total, mineMs) },
      { metric: "legs indexed by the Omni view (that block)", perSecond: perSecond(total, indexMs) }
    ] satisfies Row[],
    detail: {
      legs: total,
      batchSize,
      batchMsMedian: Math.round(sorted[Math.floor(sorted.length / 2)]!),
      batchMsMax: Math.round(sorted.at(-1)!),
      broadcast: Number(counts!.broadcast),
      sponsorFundings: Number(counts!.fundings)
    }
  }
})

export const run = async (): Promise<void> => {
  console.log("settlement: measuring…")
  const db = await createTestDatabase("benchsettle")
  try {
    const result = await Effect.runPromise(Effect.scoped(Effect.provide(measure, walletServices(db.url, fundedDevnet))))
    printTable("settlement (one delegated address)", result.rows)
    console.log(`\nbatch of ${result.detail.batchSize}: median ${result.detail.batchMsMedian} ms, max ${result.detail.batchMsMax} ms; ` +
      `${result.detail.broadcast} legs broadcast, ${result.detail.sponsorFundings} sponsor fundings`)
    writeResults("settlement", result)
  } finally {
    await db.drop()
  }
}
