import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Which listeners the running nodes serve and at which public URL (platform/http/NodeListeners.ts):
// each node writes a row per listener once it listens, beats it while it runs and deletes it when
// it stops. The CLI, which attaches to the running system by its database, prints the URLs a
// running node uses (link tokens, embeds) instead of ones built from its own environment.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE node_listeners (
    service TEXT NOT NULL,
    node TEXT NOT NULL,
    public_url TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (service, node)
  )`
})
