import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Desk orders (cash-out, mint, redeem, wrap, unwrap; one DeskOrder entity each, its states in
// src/desk/orders/deskOrderState.ts), their auditable events (milestones, inbound partner
// webhooks), and every outbound callback delivery with its outcome. Amounts are NUMERIC base
// units of their asset (never floats); an order id is a uuid with a `TX-` + 8 character short
// reference, either form reads it.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE desk_orders (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    short_ref TEXT NOT NULL UNIQUE CHECK (short_ref ~ '^TX-[0-9A-Z]{8}$'),
    member_id UUID NOT NULL REFERENCES desk_members(id),
    key_id UUID NOT NULL REFERENCES desk_api_keys(id),
    kind TEXT NOT NULL CHECK (kind IN ('cashout', 'mint', 'redeem', 'wrap', 'unwrap')),
    status TEXT NOT NULL CHECK (status IN ('awaiting_deposit', 'deposit_seen', 'deposit_confirmed', 'burning', 'paying',
      'released', 'refunding', 'refunded', 'expired', 'failed')),
    asset TEXT NOT NULL,
    chain TEXT,
    amount NUMERIC NOT NULL CHECK (amount > 0),
    fee NUMERIC NOT NULL CHECK (fee >= 0),
    payout NUMERIC NOT NULL CHECK (payout >= 0),
    deposit_address TEXT NOT NULL,
    payout_address TEXT,
    refund_address TEXT,
    reference TEXT,
    source TEXT,
    required_confirmations INT NOT NULL CHECK (required_confirmations >= 0),
    expires_at TIMESTAMPTZ NOT NULL,
    deposit_txid TEXT,
    deposit_amount NUMERIC,
    deposit_confirmations INT NOT NULL DEFAULT 0,
    burn_txid TEXT,
    payout_txid TEXT,
    refund_txid TEXT,
    failure TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX desk_orders_key ON desk_orders (key_id, created_at)`
  // A deposit address belongs to one order only (the HD tree never hands one out twice).
  yield* sql`CREATE UNIQUE INDEX desk_orders_deposit_address ON desk_orders (deposit_address)`
  yield* sql`CREATE TABLE desk_order_events (
    id BIGSERIAL PRIMARY KEY,
    order_id UUID REFERENCES desk_orders(id),
    source TEXT NOT NULL,
    event TEXT NOT NULL,
    body JSONB NOT NULL,
    dedupe_key TEXT UNIQUE,
    at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX desk_order_events_order ON desk_order_events (order_id, id)`
  yield* sql`CREATE INDEX desk_order_events_source ON desk_order_events (source, id)`
  yield* sql`CREATE TABLE desk_callback_deliveries (
    event_id UUID PRIMARY KEY,
    key_id UUID NOT NULL REFERENCES desk_api_keys(id),
    order_id UUID REFERENCES desk_orders(id),
    event_type TEXT NOT NULL,
    url TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'rejected', 'failed', 'refused_target')),
    http_status INT,
    error TEXT,
    duration_ms INT NOT NULL,
    attempted_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX desk_callback_deliveries_key ON desk_callback_deliveries (key_id, attempted_at)`
})
