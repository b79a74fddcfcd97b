import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// A place's idempotency key, (market, user, client order id), as one stored column with its own
// unique index (issue 22). The Market's batch asks which of its places' keys are taken; asked as
// a join on the three columns, the planner costed the unique index (market_id, user_id,
// client_order_id) and orders_user (user_id, market_id, order_id) alike on a fresh table's empty
// statistics and took orders_user, reading every order of the user in the market per probe (1.35
// ms a probe against 0.007 after ANALYZE; docs/operations.md, "Orders benchmark", sessions 19 and
// 20). `client_key = ANY(keys)` has one index it can use, whatever the statistics say. The key
// replaces the three-column constraint (same uniqueness: a client order id has no space, and the
// two ids before it are digits), so an insert still maintains one unique index.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orders ADD COLUMN client_key TEXT
    GENERATED ALWAYS AS (market_id::text || ' ' || user_id::text || ' ' || client_order_id) STORED`
  yield* sql`CREATE UNIQUE INDEX orders_client_key ON orders (client_key)`
  yield* sql`ALTER TABLE orders DROP CONSTRAINT orders_market_id_user_id_client_order_id_key`
})
