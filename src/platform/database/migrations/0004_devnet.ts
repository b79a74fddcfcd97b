import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Payments made by `devnet pay` (the Devnet entity), by the CLI's request id: a redelivered Pay
// finds its txid here and answers it instead of paying a second time.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE devnet_payments (
    request_id TEXT PRIMARY KEY,
    chain TEXT NOT NULL,
    txid TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
})
