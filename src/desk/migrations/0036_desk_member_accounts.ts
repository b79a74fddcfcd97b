import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// The desk's web app (issue 24): a member is reached by a wallet address. A wallet that signs in
// without an account gets a member named by its address (account_address); a member whose wallet
// is linked is reached by the linked signing address as well. The app lists a member's orders
// across its keys, newest first.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE desk_members ADD COLUMN account_address TEXT UNIQUE`
  yield* sql`CREATE INDEX desk_orders_member ON desk_orders (member_id, created_at DESC)`
})
