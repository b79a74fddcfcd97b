// Settlement on the ledger devnet with a real Postgres: trades and their legs written by hand (as
// the Market writes them), the Authorization entity signing legs from its delegated address with
// coin from the fee sponsor, the Settlement entity following them to the final depth, a dropped
// broadcast sent again with its stored bytes, an invalid Omni send failed with its reason, and
// the expiry sweep that leaves nothing behind a destroyed key.
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Transaction } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { PgClient } from "@effect/sql-pg"
import { Effect, Either, Fiber, Redacted } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Authorization, Grant, type LegRef, SignLegs } from "../../schemas/exchange/authorization.ts"
import { Activate, Market } from "../../schemas/exchange/market.ts"
import { Check, Follow, Settlement } from "../../schemas/exchange/settlement.ts"
import { UtxoDevnet } from "../../src/chain/ledger/devnet.ts"
import { devnetDollar } from "../../src/chain/ledger/devnetFaucet.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { addressScript } from "../../src/chain/txBuilder.ts"
import { makeDelegatedWallet } from "../../src/exchange/authorization/DelegatedWallet.ts"
import { LegStore, layer as legStoreLayer, type LegToStore } from "../../src/exchange/authorization/legStore.ts"
import { decodeState, delegatedKeysLabel, openWithState } from "../../src/exchange/authorization/keyEpochs.ts"
import { stateFileName } from "../../src/exchange/authorization/KeyEpochStore.ts"
import { entityIdOf } from "../../src/exchange/authorization/policy.ts"
import { globalId } from "../../src/exchange/markets/ids.ts"
import { MarketRegistry } from "../../src/exchange/markets/MarketRegistry.ts"
import { configLayer } from "../../src/config.ts"
import { FeeSponsor } from "../../src/platform/ledger/FeeSponsor.ts"
import { make as secretBox } from "../../src/platform/SecretBox.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { withTableRenamed } from "../support/pg.ts"
import { fundOmni, issueProperty, mine, nativeBalance, newAddress, omniBalance, until } from "../support/omniWorld.ts"

const FINAL_DEPTH = 3
const COIN = 10n ** 8n
const dusd = devnetDollar.propertyId
let db: TestDatabase
let node: RunningNode
let tok: number

interface Party {
  readonly userId: number
  readonly own: string
  readonly asset: string
  readonly grantId: string
  readonly delegated: string
}
let seller: Party // sells TOK: its TOK grant pays base legs
let buyer: Party // buys with DUSD: its DUSD grant pays quote legs

const grant = (userId: number, asset: string, expiresAtMs: number, grantId = randomUUID()) =>
  node.run(Effect.gen(function*() {
    const client = yield* Authorization.client
    return yield* client(entityIdOf(userId, asset)).Grant(new Grant({ grantId, cap: "1000000", expiresAtMs }))
  }))

const party = async (asset: string, expiresAtMs = Date.now() + 3_600_000): Promise<Party> => {
  const own = newAddress()
  const { userId } = await createKey(db.url, { scopes: ["read", "trade"], addresses: [own] })
  const g = await grant(userId, asset, expiresAtMs)
  return { userId, own, asset, grantId: g.grantId, delegated: g.delegatedAddress }
}

const signLegs = (p: Party, legs: ReadonlyArray<LegRef>) =>
  node.run(Effect.gen(function*() {
    const client = yield* Authorization.client
    return yield* client(entityIdOf(p.userId, p.asset)).SignLegs(new SignLegs({ grantId: p.grantId, legs }))
  }))

const settlement = (tradeId: string) => node.run(Effect.map(Settlement.client, (client) => client(tradeId)))
const follow = async (tradeId: string) => (await settlement(tradeId)).Follow(new Follow({ tradeId }), { discard: true }).pipe(Effect.runPromise)

let trades = 0
/** A trade of `base` TOK sats for `quote` DUSD sats between `s` and `b`, with its two recorded legs. */
const recordTrade = async (s: Party, b: Party, base: bigint, quote: bigint) => {
  // The test's own market (the node's demo world listed the first ones).
  const [market] = await db.query<{ id: number }>(`SELECT id FROM markets WHERE symbol = 'TOKDUSD'`)
  const tradeId = String(globalId(market!.id, ++trades))
  await db.query(`INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id,
      buyer_user, seller_user, buyer_is_maker, time_ms) VALUES ($1, $6, 1, 1, $2, 1, 2, $3, $4, false, $5)`,
  [tradeId, quote.toString(), b.userId, s.userId, Date.now(), market!.id])
  await db.query(`INSERT INTO settlement_legs (trade_id, leg, asset, property_id, amount, grant_id, from_address, to_address) VALUES
      ($1, 'base', 'TOK', $2, $3, $4, $5, $6), ($1, 'quote', 'DUSD', $7, $8, $9, $10, $11)`,
  [tradeId, tok, base.toString(), s.grantId, s.delegated, b.own, dusd, quote.toString(), b.grantId, b.delegated, s.own])
  return tradeId
}

interface LegRow { leg: string; status: string; txid: string | null; tx_hex: string | null; confirmations: number; block_height: number | null; broadcasts: number; failure: string | null }
const legs = (tradeId: string) =>
  db.query<LegRow>(`SELECT leg, status, txid, tx_hex, confirmations, block_height, broadcasts, failure FROM settlement_legs WHERE trade_id = $1 ORDER BY leg`, [tradeId])
const untilLegs = (tradeId: string, ok: (rows: LegRow[]) => boolean, what: string) =>
  until(async () => {
    const rows = await legs(tradeId)
    return ok(rows) ? rows : undefined
  }, 30_000, `${what} (trade ${tradeId})`)
const mempool = () => node.run(Effect.flatMap(UtxoDevnet, (d) => d.mempool))

/** Mines a block at a time until every leg of the trade is settled (final or failed). */
const settle = async (tradeId: string) => {
  for (let i = 0; i < 20; i++) {
    const rows = await legs(tradeId)
    if (rows.every((r) => r.status === "final" || r.status === "failed")) return rows
    await mine(node)
    await new Promise((r) => setTimeout(r, 400))
  }
  throw new Error(`trade ${tradeId} did not settle: ${JSON.stringify(await legs(tradeId))}`)
}

const opsToken = "ops-token-of-the-settlement-test"

beforeAll(async () => {
  process.env.SHARDLINE_KEY_EPOCH_MS = "1000"
  db = await createTestDatabase("settle")
  node = await startNode(db.url, {
    SHARDLINE_DEVNET_BLOCK_MS: "0", // blocks only when a test mines them
    SHARDLINE_LEDGER_BLOCK_MS: "300",
    SHARDLINE_MESSAGE_POLL_MS: "100",
    SHARDLINE_SETTLEMENT_FINAL_DEPTH: String(FINAL_DEPTH),
    SHARDLINE_SWEEP_GRACE_MS: "20000",
    SHARDLINE_OPS_TOKEN: opsToken // the fee sponsor's address and balance are in the full view only
  })
  tok = await issueProperty(node, "Settlement Token", 1_000_000n)
  await db.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ('TOK', $1, 8), ('DUSD', $2, 8)
    ON CONFLICT (code) DO NOTHING`, [tok, dusd]) // the node's demo world has registered DUSD already
  await db.query(`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
    VALUES ((SELECT coalesce(max(id), 0) + 1 FROM markets), 'TOKDUSD', 'TOK', 'DUSD', '0.01', '0.01', '0.01', '1000000', '0.01', '9000000', '0', '0')`)
  seller = await party("TOK")
  buyer = await party("DUSD")
  await fundOmni(node, seller.delegated, tok, 100n * COIN)
  await fundOmni(node, buyer.delegated, dusd, 1000n * COIN)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

describe("settlement", () => {
  let first: string

  it("signs a leg once, stores its bytes, broadcasts them; a second SignLegs at the same time answers the same txid", async () => {
    first = await recordTrade(seller, buyer, 2n * COIN, 5n * COIN)
    const ref = [{ tradeId: first, leg: "base" as const }]
    const [a, b] = await Promise.all([signLegs(seller, ref), signLegs(seller, ref)])
    expect(a).toEqual(b)
    const [base] = await legs(first)
    expect(base).toMatchObject({ status: "broadcast", broadcasts: 1, txid: a[0]!.txid })
    expect(Transaction.fromHex(base!.tx_hex!).getId()).toBe(base!.txid)
    expect(await mempool()).toContain(base!.txid)
    // The fee coin came from the sponsor: a funding of the seller's delegated address is in its journal.
    const fundings = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM fee_sponsor_txs WHERE to_address = $1`, [seller.delegated])
    expect(Number(fundings[0]!.n)).toBeGreaterThanOrEqual(1)
  })

  it("follows a trade to the final depth: the unsigned leg is signed, then confirmations, block and the Omni judgement are recorded", async () => {
    await follow(first)
    const broadcast = await untilLegs(first, (rows) => rows.every((r) => r.status === "broadcast"), "both legs broadcast")
    await mine(node)
    await untilLegs(first, (rows) => rows.every((r) => r.status === "confirmed" && r.confirmations === 1 && r.block_height !== null), "both legs confirmed")
    const done = await settle(first)
    expect(done.map((r) => [r.leg, r.status])).toEqual([["base", "final"], ["quote", "final"]])
    for (const r of done) expect(r.confirmations).toBeGreaterThanOrEqual(FINAL_DEPTH)
    expect(done.map((r) => r.txid)).toEqual(broadcast.map((r) => r.txid)) // never re-made
    expect(await omniBalance(node, buyer.own, tok)).toBe(2n * COIN)
    expect(await omniBalance(node, seller.own, dusd)).toBe(5n * COIN)
    // The entity writes `done` a few statements after the legs' last update, which settle() may see first.
    const f = await until(async () => {
      const [row] = await db.query<{ done: boolean; checks: number }>(`SELECT done, checks FROM settlement_follows WHERE trade_id = $1`, [first])
      return row?.done === true ? row : undefined
    }, 5_000, `the follow of trade ${first} done`)
    expect(f.done).toBe(true)
    expect(f.checks).toBeLessThanOrEqual(10) // timers paced by the expected block time, not every poll
  })

  it("a stale Check and a Follow delivered again change nothing and pay nothing twice", async () => {
    const client = await settlement(first)
    await Effect.runPromise(client.Check(new Check({ tradeId: first, n: 1, dueAtMs: Date.now() }), { discard: true }))
    await Effect.runPromise(client.Check(new Check({ tradeId: first, n: Date.now() + 1e9, dueAtMs: Date.now() }), { discard: true }))
    await new Promise((r) => setTimeout(r, 1_500))
    const rows = await legs(first)
    expect(rows.map((r) => r.status)).toEqual(["final", "final"])
    expect(rows.map((r) => r.broadcasts)).toEqual([1, 1])
    expect(await omniBalance(node, buyer.own, tok)).toBe(2n * COIN)
  })

  it("sends a dropped leg again with its stored bytes, and it settles once", async () => {
    const tradeId = await recordTrade(seller, buyer, 1n * COIN, 2n * COIN)
    await node.run(Effect.flatMap(UtxoDevnet, (d) => d.faults.dropBroadcasts(1)))
    const [signed] = await signLegs(seller, [{ tradeId, leg: "base" }])
    expect(await mempool()).not.toContain(signed!.txid) // the ledger answered and lost it
    await follow(tradeId)
    await until(async () => ((await mempool()).includes(signed!.txid) ? true : undefined), 10_000, "the dropped leg back in the mempool")
    const done = await settle(tradeId)
    expect(done.map((r) => r.status)).toEqual(["final", "final"])
    expect(done[0]!.txid).toBe(signed!.txid)
    expect(done[0]!.broadcasts).toBe(2)
    expect(await omniBalance(node, buyer.own, tok)).toBe(3n * COIN)
    expect(await omniBalance(node, seller.own, dusd)).toBe(7n * COIN)
  })

  it("a leg signed from the Market's terms: terms that disagree with the row are never stored; the caller records the broadcast", async () => {
    // Parties of its own: the other cases' balances stay as they count them.
    const [s2, b2] = [await party("TOK"), await party("DUSD")]
    await fundOmni(node, s2.delegated, tok, 10n * COIN)
    await fundOmni(node, b2.delegated, dusd, 10n * COIN)
    const tradeId = await recordTrade(s2, b2, 1n * COIN, 2n * COIN)
    const terms = { propertyId: tok, amount: String(1n * COIN), to: b2.own }
    const send = (legs: ReadonlyArray<LegRef>) =>
      node.run(Effect.gen(function*() {
        const client = yield* Authorization.client
        return yield* client(entityIdOf(s2.userId, s2.asset)).SignLegs(new SignLegs({ grantId: s2.grantId, legs, callerRecordsBroadcasts: true }))
      }).pipe(Effect.either))
    // A wrong amount, then a wrong receiver: built, never stored, never sent; the leg stays recorded.
    // A receiver the builder refuses (it would fail a leg that really pays it) fails nothing either.
    for (const wrong of [{ ...terms, amount: String(3n * COIN) }, { ...terms, to: s2.own }, { ...terms, to: "not-an-address" }]) {
      const refused = await send([{ tradeId, leg: "base", terms: wrong }])
      expect(refused._tag).toBe("Left")
      expect((await legs(tradeId))[0]).toMatchObject({ status: "recorded", tx_hex: null, txid: null })
    }
    const signed = await send([{ tradeId, leg: "base", terms }])
    if (signed._tag !== "Right") throw new Error(`not signed: ${JSON.stringify(signed.left)}`)
    expect(signed.right).toEqual([{ tradeId, leg: "base", txid: expect.any(String), broadcast: true }])
    // Stored before it was sent; the broadcast is the caller's to record (the Market does it for a whole batch).
    expect((await legs(tradeId))[0]).toMatchObject({ status: "signed", txid: signed.right[0]!.txid, broadcasts: 0 })
    expect(await mempool()).toContain(signed.right[0]!.txid)
    await follow(tradeId)
    const done = await settle(tradeId)
    expect(done.map((r) => r.status)).toEqual(["final", "final"])
    expect(done[0]!.txid).toBe(signed.right[0]!.txid)
    expect(await omniBalance(node, b2.own, tok)).toBe(1n * COIN)
    expect(await omniBalance(node, s2.own, dusd)).toBe(2n * COIN)
  })

  it("fails a leg the Omni indexer judges invalid, with the indexer's reason", async () => {
    const tradeId = await recordTrade(seller, buyer, 5_000n * COIN, 1n * COIN) // the seller's address holds 97 TOK
    await follow(tradeId)
    const done = await settle(tradeId)
    expect(done.map((r) => [r.leg, r.status])).toEqual([["base", "failed"], ["quote", "final"]])
    expect(done[0]!.failure).toMatch(/^the Omni indexer judged the send invalid: sender T\w+ has 9700000000 of property \d+, needs 500000000000$/)
    expect(await omniBalance(node, buyer.own, tok)).toBe(3n * COIN)
  })

  it("a leg whose block is reorged away and lost is sent again with its stored bytes", async () => {
    const tradeId = await recordTrade(seller, buyer, 1n * COIN, 1n * COIN)
    await follow(tradeId)
    const sent = await untilLegs(tradeId, (rows) => rows.every((r) => r.status === "broadcast"), "both legs broadcast")
    await mine(node)
    const confirmed = await untilLegs(tradeId, (rows) => rows.every((r) => r.status === "confirmed"), "both legs confirmed")
    // The block goes; its transactions are lost rather than taken back into the mempool.
    await node.run(Effect.flatMap(UtxoDevnet, (d) => d.faults.reorg({ depth: 1, orphanedTxs: "drop" })))
    await until(async () => {
      const pool = await mempool()
      return sent.every((r) => pool.includes(r.txid!)) ? true : undefined
    }, 15_000, "both legs back in the mempool")
    const done = await settle(tradeId)
    expect(done.map((r) => r.status)).toEqual(["final", "final"])
    expect(done.map((r) => r.txid)).toEqual(sent.map((r) => r.txid))
    expect(done.map((r) => r.broadcasts)).toEqual([2, 2])
    done.forEach((r, i) => expect(r.block_height).toBeGreaterThan(confirmed[i]!.block_height!))
    expect(await omniBalance(node, buyer.own, tok)).toBe(4n * COIN)
    expect(await omniBalance(node, seller.own, dusd)).toBe(9n * COIN)
  })

  it("/ops (with the ops token) shows the fee sponsor's address and what it can spend", async () => {
    const address = await node.run(Effect.map(FeeSponsor, (s) => s.address))
    const sponsor = await until(async () => {
      const view = (await (await fetch(`${node.baseUrl}/ops`, { headers: { authorization: `Bearer ${opsToken}` } })).json()) as { feeSponsor: { address: string; sats: string | null } | null }
      return view.feeSponsor?.sats != null ? view.feeSponsor : undefined
    }, 10_000, "the fee sponsor in /ops")
    expect(sponsor.address).toBe(address)
    expect(BigInt(sponsor.sats!)).toBeGreaterThan(0n)
  })

  it("at expiry, sweeps what is left to the user's address and the fee coin to the sponsor, then destroys the key", async () => {
    const leaving = await party("TOK", Date.now() + 12_000)
    await fundOmni(node, leaving.delegated, tok, 10n * COIN)
    // A leg of 3 TOK still in the mempool at expiry: the sweep leaves it its tokens.
    const tradeId = await recordTrade(leaving, buyer, 3n * COIN, 1n * COIN)
    await signLegs(leaving, [{ tradeId, leg: "base" }])
    const sponsor = await node.run(Effect.map(FeeSponsor, (s) => s.address))

    const [sweep] = await until(async () => {
      const rows = await db.query<{ amount: string; to_address: string; txid: string }>(
        `SELECT amount::text AS amount, to_address, txid FROM authorization_sweeps WHERE grant_id = $1`, [leaving.grantId])
      return rows.length > 0 ? rows : undefined
    }, 30_000, "the sweep")
    expect(sweep).toMatchObject({ amount: String(7n * COIN), to_address: leaving.own })
    await until(async () => ((await db.query(`SELECT 1 FROM authorization_keys WHERE grant_id = $1`, [leaving.grantId])).length === 0 ? true : undefined), 10_000, "the key deleted")
    const events = await db.query<{ kind: string }>(`SELECT kind FROM authorization_events WHERE grant_id = $1 ORDER BY id`, [leaving.grantId])
    expect(events.map((e) => e.kind)).toEqual(["granted", "swept", "expired"])

    // One transaction: the tokens to the user's address (the reference), the rest of the native coin to the sponsor.
    const tx = Transaction.fromHex((await db.query<{ tx_hex: string }>(`SELECT tx_hex FROM authorization_sweeps WHERE grant_id = $1`, [leaving.grantId]))[0]!.tx_hex)
    const paid = (address: string) => tx.outs.filter((o) => Buffer.from(o.script).equals(Buffer.from(Either.getOrThrow(addressScript(address, ledgerParams))))).map((o) => o.value)
    expect(paid(leaving.own)).toEqual([ledgerParams.dustSats])
    expect(paid(sponsor)).toHaveLength(1)
    expect(paid(sponsor)[0]).toBeGreaterThan(ledgerParams.dustSats)
    await settle(tradeId)
    expect(await omniBalance(node, leaving.delegated, tok)).toBe(0n)
    expect(await omniBalance(node, leaving.own, tok)).toBe(7n * COIN)
    expect(await omniBalance(node, buyer.own, tok)).toBe(7n * COIN)
    expect(await nativeBalance(node, leaving.delegated)).toBe(0n)
  }, 60_000)

  it("a leg unsigned at expiry for want of a fee coin is signed once the sponsor can pay, not failed", async () => {
    // Chaos seed 1 (session 21): a grant expired while the ledger refused connections; its base
    // leg had no fee coin, and the expiry failed it at once, leaving the buyer unpaid for good.
    // Here the sponsor cannot pay (its table is away) from the grant to a few seconds past its
    // expiry: the grant gets no fee coin, the leg cannot be built, and the expiry must keep trying
    // while the key opens.
    let leaving: Party | undefined
    let tradeId = ""
    const expiresAt = Date.now() + 8_000
    await withTableRenamed(db, "fee_sponsor_txs", async () => {
      leaving = await party("TOK", expiresAt)
      await fundOmni(node, leaving.delegated, tok, 5n * COIN)
      tradeId = await recordTrade(leaving, buyer, 2n * COIN, 1n * COIN)
      await new Promise((r) => setTimeout(r, Math.max(0, expiresAt + 4_000 - Date.now())))
      // Expired, and its leg still waits unsigned (not failed).
      const [base] = (await legs(tradeId)).filter((l) => l.leg === "base")
      expect(base).toMatchObject({ status: "recorded", txid: null })
    })
    const [base] = (await untilLegs(tradeId, (rows) => rows.some((r) => r.leg === "base" && r.txid !== null), "the base leg signed after the sponsor came back"))
      .filter((l) => l.leg === "base")
    expect(base!.status).not.toBe("failed")
    await until(async () => ((await db.query(`SELECT 1 FROM authorization_sweeps WHERE grant_id = $1`, [leaving!.grantId])).length > 0 ? true : undefined), 30_000, "the sweep")
    await until(async () => ((await db.query(`SELECT 1 FROM authorization_keys WHERE grant_id = $1`, [leaving!.grantId])).length === 0 ? true : undefined), 30_000, "the key deleted")
    await settle(tradeId)
    expect((await legs(tradeId)).find((l) => l.leg === "base")!.status).toBe("final")
    expect(await omniBalance(node, leaving!.own, tok)).toBe(3n * COIN)
  }, 90_000)

  it("a replaced grant is swept before its key goes", async () => {
    const own = newAddress()
    const { userId } = await createKey(db.url, { scopes: ["read", "trade"], addresses: [own] })
    const old = await grant(userId, "TOK", Date.now() + 3_600_000)
    await fundOmni(node, old.delegatedAddress, tok, 4n * COIN)
    const replacement = await grant(userId, "TOK", Date.now() + 3_600_000)
    expect(replacement.delegatedAddress).not.toBe(old.delegatedAddress)
    const events = await db.query<{ kind: string }>(`SELECT kind FROM authorization_events WHERE grant_id = $1 ORDER BY id`, [old.grantId])
    expect(events.map((e) => e.kind)).toEqual(["granted", "swept", "replaced"])
    await mine(node)
    expect(await omniBalance(node, old.delegatedAddress, tok)).toBe(0n)
    expect(await omniBalance(node, own, tok)).toBe(4n * COIN)
  })

  it("a sweep run again sends the bytes it recorded, never a second transaction", async () => {
    const p = await party("DUSD")
    await fundOmni(node, p.delegated, dusd, 3n * COIN)
    // Open the delegated key as the node would (its key epoch file and the master key).
    const [stored] = await db.query<{ key_enc: string }>(`SELECT key_enc FROM authorization_keys WHERE grant_id = $1`, [p.grantId])
    const state = Either.getOrThrow(decodeState(readFileSync(join(node.config.dataDir, stateFileName), "utf8")))
    const wif = Either.getOrThrow(openWithState(state, secretBox(Buffer.from(testMasterKey, "hex")).subkey(delegatedKeysLabel), p.grantId, stored!.key_enc))
    const privateKey = ECPairFactory(ecc).fromWIF(wif, ledgerParams.network).privateKey!
    const sweepTwice = Effect.gen(function*() {
      const wallet = yield* makeDelegatedWallet(p.delegated, privateKey)
      const once = yield* wallet.sweep({ grantId: p.grantId, userId: p.userId, asset: "DUSD" })
      // A second wallet, as after a restart: it knows nothing but the rows.
      const again = yield* (yield* makeDelegatedWallet(p.delegated, privateKey)).sweep({ grantId: p.grantId, userId: p.userId, asset: "DUSD" })
      return [once, again]
    })
    // The node's own services, plus a pool of our own on its database and its config.
    const [once, again] = await node.run(sweepTwice.pipe(
      Effect.provide(configLayer(node.config)),
      Effect.provide(PgClient.layer({ url: Redacted.make(db.url) })),
      Effect.scoped
    ))
    expect(once).toMatchObject({ amount: 3n * COIN, toAddress: p.own, repeated: false })
    expect(again).toMatchObject({ txid: once!.txid, repeated: true })
    await mine(node)
    expect(await omniBalance(node, p.own, dusd)).toBe(3n * COIN)
    expect(await omniBalance(node, p.delegated, dusd)).toBe(0n)
  })

  // Issue 22: wallets that store at once share one statement (legStore.ts); each is told only of
  // its own legs, a leg whose row says other terms is not stored, and of two stores of one leg
  // only the first holds the row. Rows updated by one statement share its now() in updated_at.
  it("stores several wallets' legs in one statement, each told only of its own", async () => {
    const t1 = await recordTrade(seller, buyer, 1n, 2n)
    const t2 = await recordTrade(seller, buyer, 3n, 4n)
    const leg = (tradeId: string, name: "base" | "quote", p: Party, to: string, amount: bigint, hex: string): LegToStore => ({
      tradeId, leg: name, txHex: hex, txid: hex.padEnd(64, "0"), propertyId: String(name === "base" ? tok : dusd), amount: amount.toString(),
      toAddress: to, grantId: p.grantId, fromAddress: p.delegated, keyGuard: true
    })
    const sellerLegs = [leg(t1, "base", seller, buyer.own, 1n, "aa01"), leg(t2, "base", seller, buyer.own, 3n, "aa02")]
    const buyerLegs = [leg(t1, "quote", buyer, seller.own, 2n, "bb01")]
    // Terms the row does not say (another amount): never stored.
    const wrongTerms = [leg(t2, "quote", buyer, seller.own, 5n, "cc01")]
    // The same leg as the buyer's, other bytes: waits for the next statement, where the row is taken.
    const second = [leg(t1, "quote", buyer, seller.own, 2n, "dd01")]
    // A first store held on a row lock, so that the others arrive while its statement is out.
    const t0 = await recordTrade(seller, buyer, 5n, 6n)
    const blocker = new pg.Client({ connectionString: db.url })
    await blocker.connect()
    await blocker.query("BEGIN")
    await blocker.query(`SELECT 1 FROM settlement_legs WHERE trade_id = $1 AND leg = 'base' FOR UPDATE`, [t0])
    const answers = await node.run(Effect.gen(function*() {
      const { store } = yield* LegStore
      const first = yield* Effect.fork(store([leg(t0, "base", seller, buyer.own, 5n, "ee01")]))
      yield* Effect.sleep("200 millis")
      const rest = yield* Effect.fork(Effect.all([store(sellerLegs), store(buyerLegs), store(wrongTerms), store(second)], { concurrency: "unbounded" }))
      yield* Effect.sleep("200 millis")
      yield* Effect.promise(() => blocker.query("COMMIT"))
      return [yield* Fiber.join(first), ...(yield* Fiber.join(rest))]
    }).pipe(Effect.provide(legStoreLayer), Effect.provide(PgClient.layer({ url: Redacted.make(db.url) }))))
    await blocker.end()
    expect(answers.map((a) => [...a].sort())).toEqual([[`${t0}:base`], [`${t1}:base`, `${t2}:base`], [`${t1}:quote`], [], []])
    const rows = await db.query<{ trade_id: string; leg: string; tx_hex: string | null; status: string; at: string }>(
      `SELECT trade_id::text, leg, tx_hex, status, updated_at::text AS at FROM settlement_legs WHERE trade_id IN ($1, $2) ORDER BY trade_id, leg`, [t1, t2])
    expect(rows.map((r) => [r.leg, r.tx_hex, r.status])).toEqual([["base", "aa01", "signed"], ["quote", "bb01", "signed"], ["base", "aa02", "signed"], ["quote", null, "recorded"]])
    // The three legs, of two grants, stored by one statement (the held one was another).
    expect(new Set(rows.filter((r) => r.status === "signed").map((r) => r.at)).size).toBe(1)
    const [held] = await db.query<{ at: string }>(`SELECT updated_at::text AS at FROM settlement_legs WHERE trade_id = $1 AND leg = 'base'`, [t0])
    expect(held!.at).not.toBe(rows[0]!.at)
    await db.query(`UPDATE settlement_legs SET status = 'failed', failure = 'test rows' WHERE trade_id = $1`, [t0])
    // Not signed for real: failed so that nothing in this file's later checks waits on them.
    await db.query(`UPDATE settlement_legs SET status = 'failed', failure = 'test rows' WHERE trade_id IN ($1, $2)`, [t1, t2])
  })

  it("the market's sweep alone (no Follow): a confirmed leg is not rewritten for another block on top; a leg whose block went and took it along is sent again", async () => {
    // The test's market was listed by hand: its entity is woken now rather than at the registry's next reload.
    await node.run(Effect.gen(function*() {
      yield* (yield* MarketRegistry).reload
      yield* (yield* Market.client)("TOKDUSD").Activate(new Activate())
    }))
    const tradeId = await recordTrade(seller, buyer, 1n * COIN, 1n * COIN)
    await signLegs(seller, [{ tradeId, leg: "base" }])
    await signLegs(buyer, [{ tradeId, leg: "quote" }])
    const sent = await untilLegs(tradeId, (rows) => rows.every((r) => r.status === "broadcast"), "both legs broadcast")
    await mine(node)
    await untilLegs(tradeId, (rows) => rows.every((r) => r.status === "confirmed"), "both legs confirmed by the sweep")
    // The sweep does not read a mined leg's bytes: sending it again reads them then.
    await node.run(Effect.flatMap(UtxoDevnet, (d) => d.faults.reorg({ depth: 1, orphanedTxs: "drop" })))
    await untilLegs(tradeId, (rows) => rows.every((r) => r.broadcasts === 2 && r.status === "broadcast"), "both legs sent again by the sweep")
    expect(await mempool()).toEqual(expect.arrayContaining(sent.map((r) => r.txid)))

    await mine(node)
    const stamped = () => db.query<{ leg: string; status: string; confirmations: number; block_height: number; at: string }>(
      `SELECT leg, status, confirmations, block_height, updated_at::text AS at FROM settlement_legs WHERE trade_id = $1 ORDER BY leg`, [tradeId])
    const confirmed = await until(async () => {
      const rows = await stamped()
      return rows.every((r) => r.status === "confirmed") ? rows : undefined
    }, 30_000, `both legs confirmed again (trade ${tradeId})`)
    await mine(node)
    // The sweep saw the block on top (it recorded the tip), and left the rows as they were.
    const [market] = await db.query<{ id: number }>(`SELECT id FROM markets WHERE symbol = 'TOKDUSD'`)
    await until(async () => {
      const [tip] = await db.query<{ tip_height: number }>(`SELECT tip_height FROM exchange_market_tips WHERE market_id = $1`, [market!.id])
      return tip !== undefined && tip.tip_height > confirmed[0]!.block_height ? true : undefined
    }, 15_000, "the market's tip recorded past the legs' block")
    expect(await stamped()).toEqual(confirmed)
    const done = await settle(tradeId)
    expect(done.map((r) => r.status)).toEqual(["final", "final"])
    for (const r of done) expect(r.confirmations).toBeGreaterThanOrEqual(FINAL_DEPTH)
  })
})
