import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Settlement on chain (docs/exchange.md, "Settlement"): the fee sponsor's journal of its own
// transactions, each Settlement entity's current timer, and the index an Authorization entity
// reads its unfinished legs by when it rebuilds its coins.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Every transaction the fee sponsor signed (it pays native coin to delegated addresses),
  // stored before it is broadcast. The sponsor's spendable coins are the ledger's confirmed
  // UTXOs plus the change of these, minus what these spend; one node at a time appends here
  // (a transaction-scoped advisory lock). `dropped_at`: found never to be valid (its inputs are
  // gone), so its outputs are not counted.
  yield* sql`CREATE TABLE fee_sponsor_txs (
    seq BIGSERIAL PRIMARY KEY,
    txid TEXT NOT NULL UNIQUE,
    tx_hex TEXT NOT NULL,
    to_address TEXT NOT NULL,
    amount NUMERIC NOT NULL CHECK (amount > 0),
    ancestors INT NOT NULL CHECK (ancestors >= 1),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    dropped_at TIMESTAMPTZ
  )`
  yield* sql`CREATE INDEX fee_sponsor_txs_to ON fee_sponsor_txs (to_address, seq) WHERE dropped_at IS NULL`
  // The one Check timer a Settlement entity expects next (its n); an older one is stale and
  // ignored, so a redelivered Follow never starts a second chain of timers.
  yield* sql`CREATE TABLE settlement_follows (
    trade_id BIGINT PRIMARY KEY REFERENCES trades(trade_id),
    check_n BIGINT NOT NULL,
    due_at_ms BIGINT NOT NULL,
    checks INT NOT NULL DEFAULT 0,
    done BOOLEAN NOT NULL DEFAULT false,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  // A delegated address's own transactions that may still be unconfirmed (or reorged back).
  yield* sql`CREATE INDEX settlement_legs_from_unfinal ON settlement_legs (from_address)
    WHERE status IN ('signed', 'broadcast', 'confirmed')`
})
