import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Users, their ledger addresses and API keys. Secrets are stored encrypted (see secretBox.ts),
// never in plain text; money columns are numeric (exact), never floating point.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE users (
    id BIGSERIAL PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE user_addresses (
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, address)
  )`
  yield* sql`CREATE TABLE api_keys (
    api_key TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    secret_enc TEXT NOT NULL,
    scopes TEXT[] NOT NULL,
    ip_allowlist TEXT[] NOT NULL DEFAULT '{}',
    label TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at TIMESTAMPTZ
  )`
  yield* sql`CREATE INDEX api_keys_user ON api_keys (user_id)`
})
