import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// The Market's group commit reads, for every grant a batch places against, what its delegated
// address still owes the ledger: legs from that address not failed and not yet in a block the
// node's Omni view has applied (marketSql.ts lockGrants, `pending_out`). No index served that
// predicate (0008's settlement_legs_from_pending covers only recorded/signed/broadcast), so each
// grant of each batch scanned the whole table: 68 ms per grant with 200k legs, over a second per
// batch of 16 grants (docs/operations.md, "Orders benchmark"). With (from_address, block_height)
// over the legs that are not failed, the `block_height IS NULL OR block_height > $view` test is
// two index ranges (a BitmapOr) that touch only the address's unconfirmed and newest legs.
// 0011: numbered after 0010 (settlement), which another branch adds.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX settlement_legs_from_height ON settlement_legs (from_address, block_height) WHERE status <> 'failed'`
})
