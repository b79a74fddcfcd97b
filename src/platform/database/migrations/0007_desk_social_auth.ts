import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Desk members and their partner API keys; social sign-in sessions. Bearer secrets (API keys,
// session tokens) are stored only as their SHA-256 (hex), never in plain text; a key's callback
// signing secret must be readable to sign callbacks, so it is sealed with the SecretBox. Rows are
// revoked (revoked_at), never deleted; the partial indexes serve each node's revocation poll.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE desk_members (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    fee_bps INTEGER CHECK (fee_bps BETWEEN 0 AND 10000),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE desk_api_keys (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    key_hash TEXT NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    member_id UUID NOT NULL REFERENCES desk_members(id),
    scopes TEXT[] NOT NULL,
    callback_url TEXT,
    signing_secret_enc TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at TIMESTAMPTZ
  )`
  yield* sql`CREATE INDEX desk_api_keys_member ON desk_api_keys (member_id)`
  yield* sql`CREATE INDEX desk_api_keys_revoked ON desk_api_keys (revoked_at) WHERE revoked_at IS NOT NULL`
  yield* sql`CREATE TABLE social_sessions (
    token_hash TEXT PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    address TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
  )`
  yield* sql`CREATE INDEX social_sessions_address ON social_sessions (address)`
  yield* sql`CREATE INDEX social_sessions_revoked ON social_sessions (revoked_at) WHERE revoked_at IS NOT NULL`
})
