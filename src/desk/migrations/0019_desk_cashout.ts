import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Desk cash-out account (issue 12): fee coupons (`desk coupons add`; validating one never uses
// it, an order that applies one does, once), and what a cash-out order adds to desk_orders.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE desk_coupons (
    code TEXT PRIMARY KEY CHECK (code ~ '^[A-Z0-9_-]{3,40}$'),
    fee_bps INT NOT NULL CHECK (fee_bps BETWEEN 0 AND 10000),
    uses_max INT CHECK (uses_max IS NULL OR uses_max > 0),
    uses INT NOT NULL DEFAULT 0 CHECK (uses >= 0 AND (uses_max IS NULL OR uses <= uses_max)),
    expires_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  // The fee rate an order was quoted at (its fee is fixed in base units at creation too), the
  // coupon it used, the height its deposit scan starts from on the deposit's chain (the tip at
  // creation: the address is new, nothing older can pay it), and what a mint takes in (USDC…).
  yield* sql`ALTER TABLE desk_orders
    ADD COLUMN fee_bps INT NOT NULL DEFAULT 0 CHECK (fee_bps BETWEEN 0 AND 10000),
    ADD COLUMN coupon_code TEXT REFERENCES desk_coupons(code),
    ADD COLUMN deposit_from_height INT,
    ADD COLUMN deposit_asset TEXT`
  // Every leg an order sends, written BEFORE it is broadcast: the signed bytes (and the EVM
  // nonce in them), so a restart sends the same transaction again and never makes a second one.
  yield* sql`CREATE TABLE desk_order_legs (
    order_id UUID NOT NULL REFERENCES desk_orders(id),
    leg TEXT NOT NULL CHECK (leg IN ('sweep', 'burn', 'payout', 'refund')),
    chain TEXT NOT NULL,
    txid TEXT NOT NULL,
    raw TEXT NOT NULL,
    nonce INT,
    attempt INT NOT NULL DEFAULT 0,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (order_id, leg)
  )`
  yield* sql`CREATE UNIQUE INDEX desk_order_legs_txid ON desk_order_legs (chain, txid)`
})
