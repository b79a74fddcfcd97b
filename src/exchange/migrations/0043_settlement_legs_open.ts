import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// The legs still being followed (issue 22, point 3): each market reads its unsettled legs once per
// block (settlement/legSweep.ts). A partial index keeps that read to the open legs, however many
// settled trades the market has behind it.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX settlement_legs_open ON settlement_legs (trade_id) WHERE status NOT IN ('final', 'failed')`
})
