// Heartbeats of the desk's background jobs (desk_heartbeats), shown in /api/public/status.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Records that `job` ran now, with a line for a person. */
export const beat = (job: string, detail: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO desk_heartbeats (job, beat_at, ok, detail) VALUES (${job}, now(), true, ${detail})
      ON CONFLICT (job) DO UPDATE SET beat_at = now(), ok = true, detail = EXCLUDED.detail`)
