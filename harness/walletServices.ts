// What a delegated address's wallet (src/exchange/authorization/DelegatedWallet.ts) runs on,
// without the cluster around it: a test database, a ledger (the in-process devnet with its funded
// faucet, or any UtxoLedger layer such as litecoind over JSON-RPC), the fee sponsor and the Omni
// view. For benchmarks and tests of signing and sweeping on one machine.
import { SqlClient } from "@effect/sql"
import { ECPairFactory } from "ecpair"
import { Context, Effect, Either, Layer } from "effect"
import * as ecc from "tiny-secp256k1"
import { p2pkhAddressOfPubkey } from "../src/chain/address.ts"
import { layerDevnet } from "../src/chain/ledger/devnet.ts"
import { fundDevnetFaucet } from "../src/chain/ledger/devnetFaucet.ts"
import { UtxoLedger } from "../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams } from "../src/chain/params.ts"
import { configLayer } from "../src/config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import * as FeeSponsor from "../src/platform/ledger/FeeSponsor.ts"
import * as OmniViewIndexer from "../src/platform/ledger/OmniViewIndexer.ts"
import * as SecretBox from "../src/platform/SecretBox.ts"
import { configFrom, testMasterKey } from "./config.ts"

/** A fresh key and its ledger address ("T…"). */
export const randomLedgerKey = (): { readonly privateKey: Uint8Array; readonly address: string } => {
  const k = ECPairFactory(ecc).makeRandom({ network: ledgerParams.network })
  return { privateKey: k.privateKey!, address: Either.getOrThrow(p2pkhAddressOfPubkey(k.publicKey, ledgerParams)) }
}

/** A devnet mining on demand, its faucet funded and DUSD issued, as a node's ledger devnet starts. */
export const fundedDevnet = layerDevnet(ledgerParams).pipe(Layer.tap((context) => fundDevnetFaucet(Context.get(context, UtxoLedger))))

/**
 * The services of a delegated wallet over `ledger` on the database at `databaseUrl`. `vars` are
 * extra SHARDLINE_* settings: a real node's ledger needs `SHARDLINE_LEDGER_RPC_URL` set, so the
 * wallet applies a real node's mempool limits and the sponsor is not funded from a faucet.
 */
export const walletServices = <E>(databaseUrl: string, ledger: Layer.Layer<UtxoLedger, E>, vars: Record<string, string> = {}) => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: databaseUrl, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DEVNET_BLOCK_MS: "0", ...vars })
  return Layer.mergeAll(FeeSponsor.layer, OmniViewIndexer.layer).pipe(
    Layer.provideMerge(ledger),
    Layer.provideMerge(SecretBox.layer),
    Layer.provideMerge(databaseLayer({ applicationName: "shardline:wallet", migrations })),
    Layer.provideMerge(configLayer(config))
  )
}

export interface SeededLegs {
  /** The grant's asset: an exchange asset code for `property`. */
  readonly asset: string
  readonly property: number
  readonly grantId: string
  /** The grant's delegated address (the caller holds its key). */
  readonly delegated: string
  /** Trades 1..legs, each with a recorded base leg of `amount` base units to `toAddress`. */
  readonly legs: number
  readonly amount: bigint
  readonly toAddress: string
}

/** A user with a live grant, the asset, one market of it, and trades each with a recorded leg from the grant. */
export const seedLegs = (s: SeededLegs) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [user] = yield* sql<{ id: string }>`INSERT INTO users DEFAULT VALUES RETURNING id::text AS id`
    yield* sql`INSERT INTO user_addresses (user_id, address) VALUES (${user!.id}, ${s.toAddress})`
    yield* sql`INSERT INTO authorizations (user_id, asset, grant_id, cap, expires_at, delegated_address)
      VALUES (${user!.id}, ${s.asset}, ${s.grantId}, 1000000000, now() + interval '1 hour', ${s.delegated})`
    yield* sql`INSERT INTO exchange_assets (code, property_id, decimals) VALUES (${s.asset}, ${s.property}, 8), ('ZZQUOTE', 999999, 8)`
    yield* sql`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
      VALUES (1, ${`${s.asset}ZZQUOTE`}, ${s.asset}, 'ZZQUOTE', '0.01', '0.01', '0.01', '1000000', '0.01', '9000000', '0', '0')`
    yield* sql`INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id, buyer_user, seller_user, buyer_is_maker, time_ms)
      SELECT n, 1, 1, 1, 1, 1, 2, ${user!.id}, ${user!.id}, false, 0 FROM generate_series(1, ${s.legs}) AS n`
    yield* sql`INSERT INTO settlement_legs (trade_id, leg, asset, property_id, amount, grant_id, from_address, to_address)
      SELECT n, 'base', ${s.asset}, ${s.property}, ${s.amount.toString()}, ${s.grantId}, ${s.delegated}, ${s.toAddress} FROM generate_series(1, ${s.legs}) AS n`
  })
