import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Per-grant running totals of recorded legs (issue 22, point 3). A Market's batch read used to sum
// every leg a grant ever paid to find what its cap has left, so that read grew with the grant's
// history. Now each Market keeps one row per (grant, market), added to in the statement that
// records the batch's legs: only that market writes its row (a grant spends over several markets,
// and no market writes a row another writes, as 0008 promised for the legs), and the read sums a
// grant's few rows. Failed legs stay counted in `recorded`; the read subtracts them through a
// partial index (a leg fails rarely, and several owners may mark one failed, so no total of them
// is kept). Legs recorded before this runs are summed into their markets' rows here.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE exchange_grant_leg_totals (
    grant_id TEXT NOT NULL,
    market_id INT NOT NULL REFERENCES markets(id),
    recorded NUMERIC NOT NULL CHECK (recorded >= 0),
    PRIMARY KEY (grant_id, market_id)
  )`
  yield* sql`INSERT INTO exchange_grant_leg_totals (grant_id, market_id, recorded)
    SELECT l.grant_id, t.market_id, sum(l.amount) FROM settlement_legs l JOIN trades t ON t.trade_id = l.trade_id
    GROUP BY l.grant_id, t.market_id`
  yield* sql`CREATE INDEX settlement_legs_failed_grant ON settlement_legs (grant_id) WHERE status = 'failed'`
})
