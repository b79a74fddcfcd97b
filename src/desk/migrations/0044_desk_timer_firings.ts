import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// When each of the desk's durable timers was due and when it fired (timerFirings.ts, issue 25):
// one row per timer (an order's Tick of one due time, a link token's Expire), written by the
// entity that owns the timer when it fires; a redelivery of the same timer counts in `deliveries`
// instead of adding a row. Rows older than a day are pruned (fired_at index).
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
})
