import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// One transaction pays one leg: a second leg with the same txid would be a leg marked paid that
// nothing pays. The signer never builds one (DelegatedWallet.ts: a batch whose legs share a coin
// dies); this makes such a row impossible too (docs/exchange.md, "Settlement").
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNIQUE INDEX settlement_legs_txid ON settlement_legs (txid) WHERE txid IS NOT NULL`
})
