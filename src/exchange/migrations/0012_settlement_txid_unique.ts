import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// One transaction pays one leg: a second leg with the same txid would be a leg marked paid that
// nothing pays. The signer never builds one (DelegatedWallet.ts: a batch whose legs share a coin
// dies); this makes such a row impossible too (docs/exchange.md, "Settlement").
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A database written before the fix may hold legs sharing one transaction (byte for byte: same
  // coin, receiver and amount). That transaction pays the first of them; the others were never
  // paid, so they go back to 'recorded' and their Settlement has them signed again, once.
  yield* sql`WITH ranked AS (
      SELECT trade_id, leg, row_number() OVER (PARTITION BY txid ORDER BY trade_id, leg) AS n
      FROM settlement_legs WHERE txid IS NOT NULL
    )
    UPDATE settlement_legs l SET tx_hex = NULL, txid = NULL, status = 'recorded', confirmations = 0,
      block_height = NULL, block_hash = NULL, broadcasts = 0, failure = NULL, updated_at = now()
    FROM ranked r WHERE l.trade_id = r.trade_id AND l.leg = r.leg AND r.n > 1`
  yield* sql`CREATE UNIQUE INDEX settlement_legs_txid ON settlement_legs (txid) WHERE txid IS NOT NULL`
})
