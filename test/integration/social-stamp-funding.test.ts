// The stamper and the fee sponsor without the cluster, on the devnet: a stamp's funding is
// journaled and committed by the sponsor before it is broadcast — never inside the stamp's own
// database transaction, where a crash between the broadcast and the commit would leave a funding
// on the chain that the journal does not hold — and a funding whose stamp did not follow is used
// by the address's next stamp instead of a second funding.
import { SqlClient } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Effect, Layer } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { stamp, stampFloatSats } from "../../src/social/posts/Stamper.ts"
import { FeeSponsor } from "../../src/platform/ledger/FeeSponsor.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { fundedDevnet, randomLedgerKey, walletServices } from "../../harness/walletServices.ts"

let db: TestDatabase
let observer: pg.Client
beforeAll(async () => {
  db = await createTestDatabase("stampfund")
  observer = new pg.Client(db.url)
  await observer.connect()
})
afterAll(async () => {
  await observer?.end()
  await db?.drop()
})

/** Whether another connection sees the sponsor's journal row (i.e. it is committed). */
const committed = async (txid: string) => (await observer.query("SELECT 1 FROM fee_sponsor_txs WHERE txid = $1", [txid])).rowCount === 1

describe("stamp funding", () => {
  it("a stamp's funding is committed to the sponsor's journal when the sponsor returns it, before the stamp is built", async () => {
    const seen: Array<{ txid: string; committed: boolean }> = []
    const scenario = Effect.gen(function*() {
      const ledger = yield* UtxoLedger
      const sql = yield* SqlClient.SqlClient
      const key = randomLedgerKey()
      const first = yield* stamp({ address: key.address, privateKey: key.privateKey, account: key.address, assetId: "ABCDEF", postId: null, tag: "C", cid: "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy" })
      const second = yield* stamp({ address: key.address, privateKey: key.privateKey, account: key.address, assetId: "ABCDEF", postId: null, tag: "P", cid: "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy" })
      yield* ledger.mine(1, key.address)
      // One funding for the address; the second stamp spends the first one's change.
      const fundings = yield* sql<{ txid: string }>`SELECT txid FROM fee_sponsor_txs WHERE to_address = ${key.address}`
      expect(fundings).toHaveLength(1)
      expect(seen).toEqual([{ txid: fundings[0]!.txid, committed: true }])
      const tx1 = yield* ledger.getTx(first.txid)
      const tx2 = yield* ledger.getTx(second.txid)
      expect(tx1.confirmations).toBe(1)
      expect(tx2.confirmations).toBe(1)
      expect(first.opReturn).toMatch(/^C\|bafk[a-z2-7]+\|ABCDEF\.0$/)
      expect(second.opReturn).toMatch(/^P\|bafk[a-z2-7]+\|ABCDEF\.1$/)
    })
    // The real sponsor, watched: at the moment it hands a funding back, is its journal row visible
    // to another connection? Inside the stamp's transaction it would not be.
    const watched = Layer.effect(FeeSponsor, Effect.map(FeeSponsor, (real) => FeeSponsor.of({
      ...real,
      fund: (to, coins, each) => Effect.tap(real.fund(to, coins, each), (f) =>
        Effect.promise(async () => { seen.push({ txid: f.txid, committed: await committed(f.txid) }) }))
    })))
    const services = walletServices(db.url, fundedDevnet)
    await Effect.runPromise(Effect.scoped(Effect.provide(scenario, Layer.provideMerge(watched, services))))
  }, 120_000)

  it("a funding journaled for an address whose stamp did not follow is spent by its next stamp; no second funding", async () => {
    const scenario = Effect.gen(function*() {
      const ledger = yield* UtxoLedger
      const sponsor = yield* FeeSponsor
      const sql = yield* SqlClient.SqlClient
      const key = randomLedgerKey()
      // As if a stamp stopped right after its funding: the funding is journaled and sent, no stamp row.
      const orphan = yield* sponsor.fund(key.address, 1, stampFloatSats)
      const s = yield* stamp({ address: key.address, privateKey: key.privateKey, account: key.address, assetId: "ABCDEF", postId: null, tag: "C", cid: "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy" })
      const fundings = yield* sql<{ txid: string }>`SELECT txid FROM fee_sponsor_txs WHERE to_address = ${key.address}`
      expect(fundings.map((f) => f.txid)).toEqual([orphan.txid])
      const [row] = yield* sql<{ tx_hex: string }>`SELECT tx_hex FROM social_stamps WHERE txid = ${s.txid}`
      const input = Transaction.fromHex(row!.tx_hex).ins[0]!
      expect(Buffer.from(input.hash).reverse().toString("hex")).toBe(orphan.txid)
      yield* ledger.mine(1, key.address)
      expect((yield* ledger.getTx(s.txid)).confirmations).toBe(1)
    })
    await Effect.runPromise(Effect.scoped(Effect.provide(scenario, walletServices(db.url, fundedDevnet))))
  }, 120_000)

  // Chaos seed 6: a post's C, P and CHV1P each on the chain twice. Two runs of the post's publish
  // overlapped (an uninterruptible Post request going on on a node that had lost its shard in a
  // database cut, and the same request on the shard's new owner); each read "no C yet" before the
  // other recorded one. A required stamp is now made once per address, tag and CID, checked under
  // the address's lock.
  it("a required stamp asked for twice at once is made once; both callers get it", async () => {
    const scenario = Effect.gen(function*() {
      const ledger = yield* UtxoLedger
      const sql = yield* SqlClient.SqlClient
      const key = randomLedgerKey()
      const cid = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
      const ask = (tag: "C" | "P") => stamp({ address: key.address, privateKey: key.privateKey, account: key.address, assetId: "ABCDEF", postId: null, tag, cid, once: true })
      const [a, b, c] = yield* Effect.all([ask("C"), ask("C"), ask("P")], { concurrency: "unbounded" })
      expect(a.txid).toBe(b.txid)
      expect(c.txid).not.toBe(a.txid)
      const rows = yield* sql<{ tag: string }>`SELECT tag FROM social_stamps WHERE address = ${key.address} ORDER BY seq`
      expect(rows.map((r) => r.tag).sort()).toEqual(["C", "P"])
      // Asked again later: the recorded one, nothing new.
      expect((yield* ask("C")).txid).toBe(a.txid)
      yield* ledger.mine(1, key.address)
      expect((yield* ledger.getTx(a.txid)).confirmations).toBe(1)
      expect((yield* ledger.getTx(c.txid)).confirmations).toBe(1)
    })
    await Effect.runPromise(Effect.scoped(Effect.provide(scenario, walletServices(db.url, fundedDevnet))))
  }, 120_000)
})
