import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Exchange trading (docs/exchange.md): what trades, the orders and trades of each market, the
// on-chain settlement legs, the system's own wallets, and the sweeps at expiry. Money columns are exact: ticks and lots as BIGINT (the market's integer units), asset
// amounts as NUMERIC in base units (satoshis of an Omni property), never floating point.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Market assets: Omni properties on the token ledger (all divisible: 8 decimals).
  yield* sql`CREATE TABLE exchange_assets (
    code TEXT PRIMARY KEY CHECK (code ~ '^[A-Z0-9]{2,12}$'),
    property_id BIGINT NOT NULL UNIQUE CHECK (property_id > 0),
    decimals INT NOT NULL CHECK (decimals IN (0, 8)),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  // id is small and part of every order and trade id (ids.ts): market id × 2^40 + number.
  yield* sql`CREATE TABLE markets (
    id INT PRIMARY KEY CHECK (id BETWEEN 1 AND 8000),
    symbol TEXT NOT NULL UNIQUE CHECK (symbol ~ '^[A-Z0-9]{4,24}$'),
    base TEXT NOT NULL REFERENCES exchange_assets(code),
    quote TEXT NOT NULL REFERENCES exchange_assets(code),
    tick_size TEXT NOT NULL,
    step_size TEXT NOT NULL,
    min_price TEXT NOT NULL,
    max_price TEXT NOT NULL,
    min_qty TEXT NOT NULL,
    max_qty TEXT NOT NULL,
    min_notional TEXT NOT NULL,
    max_notional TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'TRADING' CHECK (status IN ('TRADING', 'HALT', 'BREAK')),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (base <> quote)
  )`
  // One row per accepted order, written by its Market entity in the group commit that accepted
  // it. (market_id, user_id, client_order_id) is the idempotency key of a place.
  yield* sql`CREATE TABLE orders (
    order_id BIGINT PRIMARY KEY,
    market_id INT NOT NULL REFERENCES markets(id),
    user_id BIGINT NOT NULL REFERENCES users(id),
    client_order_id TEXT NOT NULL,
    side TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
    price_ticks BIGINT NOT NULL CHECK (price_ticks > 0),
    qty_lots BIGINT NOT NULL CHECK (qty_lots > 0),
    executed_lots BIGINT NOT NULL DEFAULT 0 CHECK (executed_lots >= 0 AND executed_lots <= qty_lots),
    quote_executed NUMERIC NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED', 'EXPIRED')),
    -- The book's priority (sequence number of its accepted event), for the rebuild.
    seq BIGINT NOT NULL,
    -- The authorization that funds it and the amount of the spent asset it still reserves (base units).
    grant_id TEXT NOT NULL,
    reserved NUMERIC NOT NULL CHECK (reserved >= 0),
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    UNIQUE (market_id, user_id, client_order_id)
  )`
  yield* sql`CREATE INDEX orders_open ON orders (market_id, seq) WHERE status IN ('NEW', 'PARTIALLY_FILLED')`
  yield* sql`CREATE INDEX orders_user ON orders (user_id, market_id, order_id)`
  yield* sql`CREATE INDEX orders_grant_open ON orders (grant_id) WHERE status IN ('NEW', 'PARTIALLY_FILLED')`
  yield* sql`CREATE TABLE trades (
    trade_id BIGINT PRIMARY KEY,
    market_id INT NOT NULL REFERENCES markets(id),
    price_ticks BIGINT NOT NULL,
    qty_lots BIGINT NOT NULL,
    quote_qty NUMERIC NOT NULL,
    maker_order_id BIGINT NOT NULL,
    taker_order_id BIGINT NOT NULL,
    buyer_user BIGINT NOT NULL,
    seller_user BIGINT NOT NULL,
    buyer_is_maker BOOLEAN NOT NULL,
    time_ms BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX trades_buyer ON trades (buyer_user, market_id, trade_id)`
  yield* sql`CREATE INDEX trades_seller ON trades (seller_user, market_id, trade_id)`
  yield* sql`CREATE INDEX trades_market_time ON trades (market_id, time_ms)`
  // Two legs per trade: base from the seller's delegated address to the buyer, quote from the
  // buyer's delegated address to the seller. Recorded (status 'recorded', no tx) in the same
  // transaction as the trade; the signed transaction is stored before it is broadcast, and a
  // leg is only ever broadcast with the bytes stored here, so it is never paid twice.
  yield* sql`CREATE TABLE settlement_legs (
    trade_id BIGINT NOT NULL REFERENCES trades(trade_id),
    leg TEXT NOT NULL CHECK (leg IN ('base', 'quote')),
    asset TEXT NOT NULL,
    property_id BIGINT NOT NULL,
    amount NUMERIC NOT NULL CHECK (amount > 0),
    grant_id TEXT NOT NULL,
    from_address TEXT NOT NULL,
    to_address TEXT NOT NULL,
    tx_hex TEXT,
    txid TEXT,
    status TEXT NOT NULL DEFAULT 'recorded' CHECK (status IN ('recorded', 'signed', 'broadcast', 'confirmed', 'final', 'failed')),
    confirmations INT NOT NULL DEFAULT 0,
    block_height INT,
    block_hash TEXT,
    broadcasts INT NOT NULL DEFAULT 0,
    failure TEXT,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (trade_id, leg)
  )`
  yield* sql`CREATE INDEX settlement_legs_from_pending ON settlement_legs (from_address) WHERE status IN ('recorded', 'signed', 'broadcast')`
  yield* sql`CREATE INDEX settlement_legs_unsigned ON settlement_legs (grant_id) WHERE tx_hex IS NULL`
  yield* sql`CREATE INDEX settlement_legs_open ON settlement_legs (trade_id) WHERE status <> 'final'`
  // An authorization's reserved and used amounts are not columns: they are the sums of its open
  // orders' `reserved` and of its legs' `amount` (docs/exchange.md), so a Market never writes a
  // row another Market writes, and placing against a grant locks only that grant's row.
  yield* sql`CREATE INDEX settlement_legs_grant ON settlement_legs (grant_id)`
  // The system's own ledger wallets (the fee sponsor, the exchange's asset issuer), sealed with
  // the master key; shared by every node through the database.
  yield* sql`CREATE TABLE system_wallets (
    name TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    key_enc TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  // Devnet users the system made a wallet for (`demo trader`): their key, sealed.
  yield* sql`CREATE TABLE demo_wallets (
    user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    key_enc TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  // At expiry, what was left at a delegated address goes back to the user before the key is
  // destroyed: recorded (signed bytes) before it is broadcast, like a leg.
  yield* sql`CREATE TABLE authorization_sweeps (
    grant_id TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    asset TEXT NOT NULL,
    from_address TEXT NOT NULL,
    to_address TEXT NOT NULL,
    amount NUMERIC NOT NULL,
    tx_hex TEXT,
    txid TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`ALTER TABLE authorization_events DROP CONSTRAINT authorization_events_kind_check`
  yield* sql`ALTER TABLE authorization_events ADD CONSTRAINT authorization_events_kind_check
    CHECK (kind IN ('granted', 'expired', 'replaced', 'swept'))`
})
