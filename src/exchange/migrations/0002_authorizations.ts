import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// One live authorization per (user, asset), owned by the Authorization entity. The delegated
// key lives in its own table so destroying it is a DELETE, not a flag. The event log is the
// audit trail (and what the fault test reads): one 'expired' row per grant at most.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE authorizations (
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    asset TEXT NOT NULL,
    grant_id TEXT NOT NULL UNIQUE,
    cap NUMERIC NOT NULL CHECK (cap > 0),
    used NUMERIC NOT NULL DEFAULT 0 CHECK (used >= 0 AND used <= cap),
    expires_at TIMESTAMPTZ NOT NULL,
    delegated_address TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, asset)
  )`
  yield* sql`CREATE TABLE authorization_keys (
    grant_id TEXT PRIMARY KEY,
    key_enc TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE authorization_events (
    id BIGSERIAL PRIMARY KEY,
    grant_id TEXT NOT NULL,
    user_id BIGINT NOT NULL,
    asset TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('granted', 'expired', 'replaced')),
    due_at TIMESTAMPTZ,
    runner TEXT,
    at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (grant_id, kind)
  )`
})
