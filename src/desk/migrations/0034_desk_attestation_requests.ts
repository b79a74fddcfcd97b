import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// An on-demand attestation (the Attestor's Attest, `desk attest`) names its request (issue 23.13):
// a message redelivered after a crash finds the row it already wrote instead of appending a
// second one. NULL for the hourly ticks (they are made exactly once by the schedule row). Adding
// a column updates no row, so the append-only triggers are not involved.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE desk_attestations ADD COLUMN request_id TEXT UNIQUE CHECK (length(request_id) BETWEEN 1 AND 200)`
})
