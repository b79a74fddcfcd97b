import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Issue 25's leftovers. (1) When each of the desk's durable timers was due and when it fired
// (timerFirings.ts): one row per timer (an order's Tick of one due time, a link token's Expire),
// written by the entity that owns the timer when it fires; a redelivery of the same timer counts
// in `deliveries` instead of adding a row. Rows older than a day are pruned (fired_at index).
// (2) The public base URL a link token was issued for (link_tokens, the platform's table shared by
// the desk's and social's link-token entities): its manifest's `from` and `callback_url` come from
// it on whichever node serves or redeems the token. NULL for tokens issued before: those take the
// serving node's own URL, as before. Kept in this migration because one id was free for both.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE desk_timer_firings (
    timer TEXT NOT NULL CHECK (timer IN ('order_tick', 'link_expire')),
    entity_id TEXT NOT NULL,
    due_at TIMESTAMPTZ NOT NULL,
    fired_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    deliveries INTEGER NOT NULL DEFAULT 1 CHECK (deliveries >= 1),
    last_fired_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (timer, entity_id, due_at)
  )`
  yield* sql`CREATE INDEX desk_timer_firings_fired_at ON desk_timer_firings (fired_at)`
  yield* sql`ALTER TABLE link_tokens ADD COLUMN base_url TEXT`
})
