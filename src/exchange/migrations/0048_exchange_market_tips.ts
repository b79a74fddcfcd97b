import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// The ledger tip each market's settlement sweep last saw (settlement/legSweep.ts). The sweep used
// to rewrite every confirmed leg's row on every block just to raise its `confirmations`: about 7.5
// updates a leg, most of them not HOT, each writing all nine indexes of settlement_legs. Now a
// confirmed leg's row keeps the count of its first block, and readers count from this row instead
// (legState.ts, `shownConfirmations`). One row per market, written only by that market's Market
// entity; no index but its key and no column an index covers, so the update each block is HOT.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE exchange_market_tips (
    market_id INT PRIMARY KEY REFERENCES markets(id),
    tip_height INT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
})
