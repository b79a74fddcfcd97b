import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// When an order's Tick chain ended on purpose (DeskOrderEntity's scheduleNext: a settled order whose
// ledger legs are final, an expired one past its late-deposit watch). The re-arm sweep
// (tickRearm.ts) restarts any chain not ended and quiet, settled orders included: chaos seed 7
// (session 20) had a released wrap following its ledger legs whose chain went quiet for 522 s, and
// the sweep looked only at open and expired orders.
//
// Orders settled or expired more than a day before this migration are marked ended (their legs are
// long final, their watch long over), so the first sweeps after it do not look at every old order.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE desk_orders ADD COLUMN ticks_done_at TIMESTAMPTZ`
  yield* sql`UPDATE desk_orders SET ticks_done_at = now()
    WHERE status IN ('released', 'refunded', 'failed', 'expired') AND updated_at < now() - interval '1 day'`
  yield* sql`CREATE INDEX desk_orders_ticking ON desk_orders (updated_at) WHERE ticks_done_at IS NULL`
})
