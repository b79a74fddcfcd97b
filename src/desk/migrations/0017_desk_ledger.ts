import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// The token desk's ground floor (docs/desk.md): its sealed secrets (HD seed, attestation keys),
// the deposit addresses derived from its HD tree, the token registry, the attestation series
// (append-only, enforced here by triggers) and the heartbeats of its background jobs.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One row per secret, sealed with the master key (SecretBox); `public` is what may be shown
  // (a seed's fingerprint, an Ed25519 public key). The first insert wins across nodes.
  yield* sql`CREATE TABLE desk_secrets (
    name TEXT PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]*$'),
    sealed TEXT NOT NULL,
    public TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  // Address indexes come from one sequence, so an index (and its address) is never handed out
  // twice, whatever chain, member or order asks.
  yield* sql`CREATE SEQUENCE desk_deposit_index_seq MINVALUE 0 START 0 MAXVALUE 2147483647`
  yield* sql`CREATE TABLE desk_deposit_addresses (
    chain TEXT NOT NULL CHECK (chain IN ('ledger', 'btc', 'ltc', 'ethereum', 'base', 'bsc')),
    idx INTEGER NOT NULL CHECK (idx >= 0),
    purpose TEXT NOT NULL CHECK (purpose IN ('member', 'order')),
    owner TEXT NOT NULL CHECK (length(owner) BETWEEN 1 AND 100),
    member_id TEXT NOT NULL CHECK (length(member_id) BETWEEN 1 AND 100),
    path TEXT NOT NULL,
    address TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, idx),
    UNIQUE (chain, address),
    UNIQUE (chain, purpose, owner)
  )`
  // The registry: fees in basis points; limits in the token's base units (8 decimals).
  yield* sql`CREATE TABLE desk_tokens (
    code TEXT PRIMARY KEY CHECK (code ~ '^[A-Za-z0-9]{2,12}$'),
    kind TEXT NOT NULL CHECK (kind IN ('dollar', 'wrapped')),
    base_asset TEXT NOT NULL CHECK (base_asset IN ('USD', 'BTC', 'LTC', 'ETH')),
    name TEXT NOT NULL,
    property_id BIGINT UNIQUE CHECK (property_id > 0),
    min_base BIGINT NOT NULL CHECK (min_base > 0),
    max_base BIGINT NOT NULL,
    fee_in_bps INTEGER NOT NULL CHECK (fee_in_bps BETWEEN 0 AND 10000),
    fee_out_bps INTEGER NOT NULL CHECK (fee_out_bps BETWEEN 0 AND 10000),
    required_confirmations INTEGER NOT NULL DEFAULT 0 CHECK (required_confirmations BETWEEN 0 AND 1000),
    live BOOLEAN NOT NULL DEFAULT false,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (max_base >= min_base)
  )`
  yield* sql`CREATE UNIQUE INDEX desk_tokens_code_upper ON desk_tokens (upper(code))`
  // The attestation series. payload is the canonical JSON exactly as hashed; prev_hash chains
  // each row to the one before (null only for the first).
  yield* sql`CREATE TABLE desk_attestations (
    seq BIGINT PRIMARY KEY CHECK (seq >= 1),
    attested_at TIMESTAMPTZ NOT NULL,
    payload TEXT NOT NULL,
    payload_hash TEXT NOT NULL UNIQUE CHECK (payload_hash ~ '^[0-9a-f]{64}$'),
    prev_hash TEXT UNIQUE CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
    signature TEXT NOT NULL CHECK (signature ~ '^[0-9a-f]{64}$'),
    ed25519_signature TEXT NOT NULL CHECK (ed25519_signature ~ '^[0-9a-f]{128}$'),
    CHECK ((seq = 1) = (prev_hash IS NULL))
  )`
  // Append-only, whoever connects: the app's own user included (a superuser could drop the
  // trigger; that is DDL, and the hash chain plus published signatures still expose it).
  yield* sql.unsafe(`CREATE FUNCTION desk_attestations_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'desk_attestations is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$`)
  yield* sql`CREATE TRIGGER desk_attestations_no_change BEFORE UPDATE OR DELETE ON desk_attestations
    FOR EACH ROW EXECUTE FUNCTION desk_attestations_append_only()`
  yield* sql`CREATE TRIGGER desk_attestations_no_truncate BEFORE TRUNCATE ON desk_attestations
    FOR EACH STATEMENT EXECUTE FUNCTION desk_attestations_append_only()`
  // The Attestor's schedule (its durable timer's number and due time) and job heartbeats.
  yield* sql`CREATE TABLE desk_attestor (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    tick_n BIGINT NOT NULL,
    due_at_ms BIGINT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE desk_heartbeats (
    job TEXT PRIMARY KEY,
    beat_at TIMESTAMPTZ NOT NULL,
    ok BOOLEAN NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
  )`
})
