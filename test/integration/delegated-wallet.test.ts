// The delegated wallet without the cluster, on the devnet: a batch that runs short of fee coin in
// the middle looks at the ledger again and then asks the sponsor, and the legs it built before
// the look (not stored yet) keep their coins: no two legs of a batch spend the same coin. Its
// signing workers dying mid-batch lose no leg and pay none twice.
import { Transaction } from "bitcoinjs-lib"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SqlClient } from "@effect/sql"
import { devnetDollar, devnetFaucet } from "../../src/chain/ledger/devnetFaucet.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { make as makeSignerPool } from "../../src/chain/signerPool.ts"
import { legFeeSats, makeDelegatedWallet } from "../../src/exchange/authorization/DelegatedWallet.ts"
import { FeeSponsor } from "../../src/platform/ledger/FeeSponsor.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { configFrom, testMasterKey } from "../../harness/config.ts"
import { keyWalletAddress } from "../../src/chain/ledger/keyWallet.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { configLayer } from "../../src/config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"
import migration0012 from "../../src/exchange/migrations/0012_settlement_txid_unique.ts"
import { make as secretBox } from "../../src/platform/SecretBox.ts"
import { fundedDevnet, randomLedgerKey, seedLegs, walletServices } from "../../harness/walletServices.ts"

const LEGS = 100
let db: TestDatabase
beforeAll(async () => { db = await createTestDatabase("dwallet") })
afterAll(async () => { await db?.drop() })

/** A delegated address holding 1,000,000 DUSD, and `legs` recorded legs of 1000 from it to a fresh receiver. */
const grantWithLegs = (grantId: string, legs: number) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const me = randomLedgerKey()
    const receiver = randomLedgerKey().address
    const faucet = devnetFaucet(ledger)
    yield* faucet.omni({ type: "simpleSend", property: devnetDollar.propertyId, amount: 1_000_000n }, me.address)
    yield* ledger.mine(1, faucet.address)
    yield* seedLegs({ asset: "DUSD", property: devnetDollar.propertyId, grantId, delegated: me.address, legs, amount: 1000n, toAddress: receiver })
    return { ledger, sponsor: yield* FeeSponsor, view: yield* OmniView, sql: yield* SqlClient.SqlClient, me, receiver, faucet }
  })

describe("delegated wallet", () => {
  it("a batch that runs short midway reloads its coins without losing the ones it just spent", async () => {
    const scenario = Effect.gen(function*() {
      const { ledger, sponsor, view, sql, me, receiver, faucet } = yield* grantWithLegs("short", LEGS)
      // Coin for about 40 legs: the batch runs out in the middle, looks at the ledger again (every time: interval 0), then asks the sponsor.
      yield* sponsor.fund(me.address, 1, 40n * (ledger.params.dustSats + legFeeSats))
      const wallet = yield* makeDelegatedWallet(me.address, me.privateKey, { reloadIntervalMs: 0 })
      const signed = yield* wallet.signLegs("short", Array.from({ length: LEGS }, (_, i) => ({ tradeId: String(i + 1), leg: "base" as const })))
      expect(signed).toHaveLength(LEGS)
      expect(yield* sql`SELECT status, count(*)::int AS n FROM settlement_legs GROUP BY status`).toEqual([{ status: "broadcast", n: LEGS }])
      const fundings = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM fee_sponsor_txs WHERE to_address = ${me.address}`
      expect(fundings[0]!.n).toBeGreaterThanOrEqual(2)
      yield* ledger.mine(1, faucet.address)
      yield* view.sync
      for (const leg of signed) expect((yield* view.tx(leg.txid))?.valid, `leg ${leg.tradeId}`).toBe(true)
      expect(yield* view.balance(receiver, devnetDollar.propertyId)).toBe(BigInt(LEGS) * 1000n)
    })
    await Effect.runPromise(Effect.scoped(Effect.provide(scenario, walletServices(db.url, fundedDevnet))))
  }, 120_000)

  // Issue 22: a worker thread signing legs dies mid-batch. Each worker of the pool exits,
  // unanswered, on its n-th request (n = 4: after three legs; n = 1: at once), in each of two
  // batches (the second on the replacement). The leg it held and the ones after it, until the
  // replacement has loaded, are built on the event loop. Every leg is signed once and broadcast,
  // no two legs spend one coin, and the receiver gets exactly what the legs say.
  for (const exitAfter of [4, 1]) {
    it(`a signing worker that dies mid-batch (each on its request ${exitAfter}): no leg lost, none paid twice`, async () => {
      const own = await createTestDatabase(`dwalletkill${exitAfter}`)
      const legs = 30
      try {
        const scenario = Effect.gen(function*() {
          const { ledger, sponsor, view, sql, me, receiver, faucet } = yield* grantWithLegs("kill", legs)
          yield* sponsor.fund(me.address, 4, 20n * (ledger.params.dustSats + legFeeSats))
          const pool = yield* makeSignerPool({ workers: 2, exitAfter })
          const wallet = yield* makeDelegatedWallet(me.address, me.privateKey, { signer: pool })
          const refs = Array.from({ length: legs }, (_, i) => ({ tradeId: String(i + 1), leg: "base" as const }))
          // Two batches: the first loses its worker; the second starts on the replacement, which dies too.
          const first = yield* wallet.signLegs("kill", refs.slice(0, legs / 2))
          expect(pool.stats().died).toBe(1)
          yield* pool.allReady
          const signed = [...first, ...yield* wallet.signLegs("kill", refs.slice(legs / 2))]
          const { died, built } = pool.stats()
          expect(died).toBe(2)
          // Each worker built exitAfter - 1 legs before it died; the rest were built on the event loop.
          expect(built).toBe(2 * (exitAfter - 1))
          expect(signed).toHaveLength(legs)
          expect(new Set(signed.map((l) => l.txid)).size).toBe(legs)
          const rows = yield* sql<{ status: string; tx_hex: string; txid: string }>`SELECT status, tx_hex, txid FROM settlement_legs ORDER BY trade_id`
          expect(rows.map((r) => r.status)).toEqual(Array(legs).fill("broadcast"))
          expect(rows.map((r) => r.txid)).toEqual(signed.map((l) => l.txid))
          // No coin spent by two legs: each outpoint is an input of exactly one stored leg.
          const spent = rows.flatMap((r) => Transaction.fromHex(r.tx_hex).ins.map((i) => `${Buffer.from(i.hash).reverse().toString("hex")}:${i.index}`))
          expect(new Set(spent).size).toBe(spent.length)
          yield* ledger.mine(1, faucet.address)
          yield* view.sync
          for (const leg of signed) expect((yield* view.tx(leg.txid))?.valid, `leg ${leg.tradeId}`).toBe(true)
          expect(yield* view.balance(receiver, devnetDollar.propertyId)).toBe(BigInt(legs) * 1000n)
        })
        await Effect.runPromise(Effect.scoped(Effect.provide(scenario, walletServices(own.url, fundedDevnet))))
      } finally {
        await own.drop()
      }
    }, 120_000)
  }

  it("a fee sponsor key an earlier build sealed as hex is sealed again as a WIF, same address", async () => {
    const other = await createTestDatabase("dwalletkey")
    try {
      const config = configFrom({ SHARDLINE_DATABASE_URL: other.url, SHARDLINE_MASTER_KEY: testMasterKey })
      await Effect.runPromise(Effect.scoped(Effect.provide(Effect.void, databaseLayer({ applicationName: "shardline:test", migrations }).pipe(Layer.provide(configLayer(config))))))
      const key = randomLedgerKey()
      const box = secretBox(Buffer.from(testMasterKey, "hex"))
      await other.query(`INSERT INTO system_wallets (name, address, key_enc) VALUES ('fee-sponsor', $1, $2)`,
        [keyWalletAddress(key.privateKey, ledgerParams), box.seal(Buffer.from(key.privateKey).toString("hex"))])
      const address = await Effect.runPromise(Effect.scoped(Effect.provide(Effect.map(FeeSponsor, (s) => s.address), walletServices(other.url, fundedDevnet))))
      expect(address).toBe(key.address)
      const [row] = await other.query<{ key_enc: string }>(`SELECT key_enc FROM system_wallets WHERE name = 'fee-sponsor'`)
      expect(box.open(row!.key_enc)).toMatch(/^[1-9A-HJ-NP-Za-km-z]{51,52}$/) // a WIF now
    } finally {
      await other.drop()
    }
  }, 120_000)

  it("migration 0012: of legs that share one transaction, all but the first go back to recorded; then txid is unique", async () => {
    const other = await createTestDatabase("dwallet12")
    try {
      const config = configFrom({ SHARDLINE_DATABASE_URL: other.url, SHARDLINE_MASTER_KEY: testMasterKey })
      const migrated = databaseLayer({ applicationName: "shardline:test", migrations }).pipe(Layer.provide(configLayer(config)))
      const me = randomLedgerKey()
      await Effect.runPromise(Effect.scoped(Effect.provide(
        seedLegs({ asset: "DUSD", property: devnetDollar.propertyId, grantId: "dup", delegated: me.address, legs: 3, amount: 1000n, toAddress: randomLedgerKey().address }),
        migrated
      )))
      // A database from before the fix: no unique index, legs 1 and 2 answered by one transaction.
      await other.query(`DROP INDEX settlement_legs_txid`)
      await other.query(`UPDATE settlement_legs SET tx_hex = 'aa', txid = $1, status = 'final', confirmations = 6, broadcasts = 1 WHERE trade_id IN (1, 2)`, ["ab".repeat(32)])
      await Effect.runPromise(Effect.scoped(Effect.provide(migration0012, migrated)))
      const rows = await other.query<{ trade_id: string; status: string; txid: string | null }>(`SELECT trade_id::text, status, txid FROM settlement_legs ORDER BY trade_id`)
      expect(rows).toEqual([
        { trade_id: "1", status: "final", txid: "ab".repeat(32) },
        { trade_id: "2", status: "recorded", txid: null },
        { trade_id: "3", status: "recorded", txid: null }
      ])
      await expect(other.query(`UPDATE settlement_legs SET txid = $1 WHERE trade_id = 3`, ["ab".repeat(32)])).rejects.toThrow(/settlement_legs_txid/)
    } finally {
      await other.drop()
    }
  }, 120_000)
})
