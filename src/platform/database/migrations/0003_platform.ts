import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Cross-node state of the HTTP layer: request-weight windows (a limit that must hold across
// nodes lives where all nodes see it) and each node's last ops report.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE rate_limit_windows (
    bucket TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (bucket, window_start)
  )`
  yield* sql`CREATE TABLE ops_nodes (
    node TEXT PRIMARY KEY,
    stats JSONB NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
})
