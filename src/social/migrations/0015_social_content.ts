import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Social content (issue 14, docs/social.md): the content store's chunks, the keys of accounts the
// service made (devnet `social account create`), posts with their hosting state, every OP_RETURN
// stamp the service signed (the chain is the record; this is the journal of what we sent and the
// coin each stamp chain continues from), charges against the on-service balance, account
// continuity, and live channels.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A staging row has cid NULL; committing names it. Chunks are chunk_bytes long except the last.
  yield* sql`CREATE TABLE social_blobs (
    blob_id UUID PRIMARY KEY,
    cid TEXT UNIQUE,
    size BIGINT,
    media_type TEXT,
    chunk_bytes INT,
    digests BYTEA,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE social_blob_chunks (
    blob_id UUID NOT NULL REFERENCES social_blobs (blob_id) ON DELETE CASCADE,
    n INT NOT NULL,
    bytes BYTEA NOT NULL,
    PRIMARY KEY (blob_id, n)
  )`
  // The sealed BIP-32 seed of an account the service made, and the next post index to derive.
  yield* sql`ALTER TABLE social_accounts ADD COLUMN seed_enc TEXT, ADD COLUMN next_post_index INT NOT NULL DEFAULT 0`
  yield* sql`CREATE TABLE social_posts (
    id UUID PRIMARY KEY,
    short_id TEXT NOT NULL UNIQUE,
    author TEXT NOT NULL REFERENCES social_accounts (address),
    post_index INT NOT NULL,
    address TEXT NOT NULL UNIQUE,
    derivation_path TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    tags JSONB NOT NULL,
    media_cids JSONB NOT NULL,
    metadata_cid TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('hosted', 'grace', 'unpinned', 'taken_down', 'moderated')),
    paid_until_ms BIGINT NOT NULL,
    timer_n BIGINT NOT NULL DEFAULT 0,
    moderation_reason TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (author, post_index)
  )`
  // Which content a post keeps pinned (its manifest and its media).
  yield* sql`CREATE TABLE social_post_cids (
    post_id UUID NOT NULL REFERENCES social_posts (id),
    cid TEXT NOT NULL,
    PRIMARY KEY (post_id, cid)
  )`
  yield* sql`CREATE INDEX social_post_cids_cid ON social_post_cids (cid)`
  // One row per stamp, written before it is broadcast. change_vout/change_value: the coin the
  // address's next stamp spends (NULL when the change went to the fee).
  yield* sql`CREATE TABLE social_stamps (
    txid TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    seq INT NOT NULL,
    post_id UUID REFERENCES social_posts (id),
    account TEXT NOT NULL,
    tag TEXT NOT NULL,
    cid TEXT NOT NULL,
    op_return TEXT NOT NULL CHECK (octet_length(op_return) <= 80),
    tx_hex TEXT NOT NULL,
    change_vout INT,
    change_value BIGINT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (address, seq)
  )`
  // Comments: the body is content (text/plain) addressed by CID, stamped X from the post's address.
  yield* sql`CREATE TABLE social_comments (
    id UUID PRIMARY KEY,
    post_id UUID NOT NULL REFERENCES social_posts (id),
    author TEXT NOT NULL REFERENCES social_accounts (address),
    body_cid TEXT NOT NULL,
    txid TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX social_comments_post ON social_comments (post_id, created_at)`
  yield* sql`CREATE TABLE social_charges (
    id BIGSERIAL PRIMARY KEY,
    account TEXT NOT NULL REFERENCES social_accounts (address),
    amount_base BIGINT NOT NULL CHECK (amount_base >= 0),
    reason TEXT NOT NULL,
    post_id UUID,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE social_continuity (
    account TEXT PRIMARY KEY REFERENCES social_accounts (address),
    new_address TEXT NOT NULL,
    manifest_cid TEXT NOT NULL,
    completes_at_ms BIGINT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('counting', 'completed', 'cancelled')),
    started_txid TEXT,
    completed_txid TEXT,
    started_at_ms BIGINT NOT NULL
  )`
  yield* sql`CREATE TABLE social_live_channels (
    stream_id TEXT PRIMARY KEY CHECK (stream_id ~ '^[A-Za-z0-9_-]{1,64}$'),
    wallet TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX social_live_channels_wallet ON social_live_channels (wallet)`
  // Ledger payments to the public top-up address, credited once each (txid) to the account that
  // sent them; the cursor is the last block height looked at.
  yield* sql`CREATE TABLE social_topups (
    txid TEXT PRIMARY KEY,
    account TEXT NOT NULL REFERENCES social_accounts (address),
    amount_base BIGINT NOT NULL CHECK (amount_base > 0),
    height INT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE social_topup_cursor (
    id INT PRIMARY KEY CHECK (id = 1),
    height INT NOT NULL
  )`
})
