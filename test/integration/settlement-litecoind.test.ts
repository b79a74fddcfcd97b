// Leg signing against a real node: litecoind -regtest over JSON-RPC. One SignLegs of 40 legs from
// one delegated address: each leg is stored signed. With a sponsor of one coin, its second funding
// hangs from its first, which the wallet's legs already fill to litecoind's limit of 25
// descendants: some broadcasts are refused, those legs stay 'signed', and after a block their
// stored bytes go out unchanged. With a sponsor of two coins, the wallet keeps each funding's
// legs under that limit itself and every leg is taken at once (session 28). Every leg is judged
// valid by our Omni indexer.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SqlClient } from "@effect/sql"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { layerRpc } from "../../src/chain/ledger/rpcLedger.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { ECOSYSTEM_MAIN } from "../../src/chain/omni/codec.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import { makeDelegatedWallet } from "../../src/exchange/authorization/DelegatedWallet.ts"
import { FeeSponsor } from "../../src/platform/ledger/FeeSponsor.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey, seedLegs, walletServices } from "../../harness/walletServices.ts"
import { startLitecoind, type Litecoind, urlWithCredentials } from "../support/litecoind.ts"

const LEGS = 40
let litecoind: Litecoind
let db: TestDatabase


beforeAll(async () => {
  litecoind = await startLitecoind()
  db = await createTestDatabase("settleltc")
}, 60_000)
afterAll(async () => {
  await litecoind?.stop()
  await db?.drop()
})

/**
 * The operator funds the sponsor with `sponsorCoinbases` coinbases; an issuer makes a property
 * and grants it to a delegated address; LEGS legs of it to one receiver are seeded. The wallet,
 * its legs' refs and what the checks read.
 */
const legsWorld = (sponsorCoinbases: number) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const sponsor = yield* FeeSponsor
    const view = yield* OmniView
    const sql = yield* SqlClient.SqlClient
    const burn = randomLedgerKey().address
    const issuer = randomLedgerKey()
    const me = randomLedgerKey()
    const receiver = randomLedgerKey().address
    yield* ledger.mine(sponsorCoinbases, sponsor.address)
    yield* ledger.mine(1, issuer.address)
    yield* ledger.mine(ledgerParams.coinbaseMaturity, burn)
    const issuerWallet = makeKeyWallet(ledger, issuer.privateKey)
    const created = yield* issuerWallet.omni({ type: "createManaged", ecosystem: ECOSYSTEM_MAIN, divisible: true, previousPropertyId: 0, category: "", subcategory: "", name: "Regtest Token", url: "", data: "" })
    yield* ledger.mine(1, burn)
    yield* view.sync
    const property = (yield* view.tx(created))!.propertyId!
    yield* issuerWallet.omni({ type: "grant", property, amount: 1_000_000n, memo: "" }, me.address)
    yield* ledger.mine(1, burn)
    yield* view.sync
    expect(yield* view.balance(me.address, property)).toBe(1_000_000n)
    yield* seedLegs({ asset: "LTOK", property, grantId: "ltc", delegated: me.address, legs: LEGS, amount: 1000n, toAddress: receiver })
    const refs = Array.from({ length: LEGS }, (_, i) => ({ tradeId: String(i + 1), leg: "base" as const }))
    const wallet = yield* makeDelegatedWallet(me.address, me.privateKey)
    return { ledger, view, sql, burn, me, receiver, property, refs, wallet }
  })

describe("settlement legs on litecoind -regtest", () => {
  it("signs a batch once; legs over the mempool's chain limit stay signed and go out after a block with the same bytes", async () => {
    const url = urlWithCredentials(litecoind)
    const ledgerLayer = layerRpc({ url, params: ledgerParams, nodeParams: litecoinRegtestParams })
    const scenario = Effect.gen(function*() {
      // One coinbase: the sponsor's second funding hangs from its first.
      const { ledger, view, sql, burn, me, receiver, property, refs, wallet } = yield* legsWorld(1)
      const first = yield* wallet.signLegs("ltc", refs)
      expect(first).toHaveLength(LEGS)
      const statuses = () => sql<{ status: string; n: number }>`SELECT status, count(*)::int AS n FROM settlement_legs GROUP BY status ORDER BY status`
      const before = yield* statuses()
      const broadcastBefore = before.find((s) => s.status === "broadcast")?.n ?? 0
      // litecoind took what its limits allow (at most 24 descendants of the unconfirmed funding), no more.
      expect(broadcastBefore).toBeGreaterThan(0)
      expect(broadcastBefore).toBeLessThan(LEGS)
      expect(before.find((s) => s.status === "signed")?.n).toBe(LEGS - broadcastBefore)

      yield* ledger.mine(1, burn)
      // Asked again (as the Settlement entity does): the same txids, the stored bytes sent.
      const again = yield* wallet.signLegs("ltc", refs)
      expect(again).toEqual(first)
      expect(yield* statuses()).toEqual([{ status: "broadcast", n: LEGS }])
      yield* ledger.mine(1, burn)
      yield* view.sync
      for (const leg of first) {
        const judged = yield* view.tx(leg.txid)
        expect(judged?.valid, `leg ${leg.tradeId}`).toBe(true)
      }
      expect(yield* view.balance(receiver, property)).toBe(BigInt(LEGS) * 1000n)
      expect(yield* view.balance(me.address, property)).toBe(1_000_000n - BigInt(LEGS) * 1000n)
    })
    await Effect.runPromise(Effect.scoped(Effect.provide(scenario, walletServices(db.url, ledgerLayer, { SHARDLINE_LEDGER_RPC_URL: url }))))
  }, 120_000)

  it("keeps a funding's legs under litecoind's 25 descendants: every leg is taken at its first broadcast", async () => {
    const url = urlWithCredentials(litecoind)
    const ledgerLayer = layerRpc({ url, params: ledgerParams, nodeParams: litecoinRegtestParams })
    const own = await createTestDatabase("settleltc2")
    try {
      const scenario = Effect.gen(function*() {
        // Two coinbases for the sponsor: its second funding spends a confirmed coin, not the first's change.
        const { ledger, view, sql, burn, receiver, property, refs, wallet } = yield* legsWorld(2)
        const signed = yield* wallet.signLegs("ltc", refs)
        expect(signed).toHaveLength(LEGS)
        // Each funding's four coins used to start four chains, together past 25 descendants of the
        // unconfirmed funding after 24 legs: those legs were refused and waited for a block.
        expect(yield* sql<{ status: string; n: number }>`SELECT status, count(*)::int AS n FROM settlement_legs GROUP BY status`).toEqual([{ status: "broadcast", n: LEGS }])
        const mempool = yield* Effect.promise(() => litecoind.rpc<Array<string>>("getrawmempool"))
        for (const leg of signed) expect(mempool, `leg ${leg.tradeId}`).toContain(leg.txid)
        yield* ledger.mine(1, burn)
        yield* view.sync
        for (const leg of signed) expect((yield* view.tx(leg.txid))?.valid, `leg ${leg.tradeId}`).toBe(true)
        expect(yield* view.balance(receiver, property)).toBe(BigInt(LEGS) * 1000n)
      })
      await Effect.runPromise(Effect.scoped(Effect.provide(scenario, walletServices(own.url, ledgerLayer, { SHARDLINE_LEDGER_RPC_URL: url }))))
    } finally {
      await own.drop()
    }
  }, 120_000)
})
