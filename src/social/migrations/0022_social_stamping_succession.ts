import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Social content, second round (docs/social.md): publishes that clients may retry (the
// Idempotency-Key of POST /api/social/posts, scoped to the account), account succession (CHV1N
// moves the account's identity to its new address; the account itself, its primary key and
// everything that references it stay), and comments stamped by their commenter with a manifest
// naming the post.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // social_accounts.address stays the account's key for ever (posts, charges, stamps, top-ups
  // reference it). identity_address is the address the account signs in and is shown by since its
  // last succession; NULL until one. Two accounts never share a current identity.
  yield* sql`ALTER TABLE social_accounts ADD COLUMN identity_address TEXT`
  yield* sql`CREATE UNIQUE INDEX social_accounts_identity ON social_accounts ((COALESCE(identity_address, address)))`
  // One row per completed succession: the history a lookup shows (previousAddresses).
  yield* sql`CREATE TABLE social_successions (
    account TEXT NOT NULL REFERENCES social_accounts (address),
    from_address TEXT NOT NULL,
    to_address TEXT NOT NULL,
    txid TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (account, from_address)
  )`
  // Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) of a publish: the key, per
  // account, names the post id the first request chose; fingerprint is the sha-256 of the request
  // payload, so the same key with another payload is refused (422).
  yield* sql`CREATE TABLE social_post_idempotency (
    account TEXT NOT NULL REFERENCES social_accounts (address),
    key TEXT NOT NULL,
    post_id UUID NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (account, key)
  )`
  // Posts written and charged whose stamps are not all on the ledger yet: their Post entity retries
  // on its FinishStamps timer; the row goes when every required stamp is out. Lookups read it.
  yield* sql`CREATE TABLE social_stamping_pending (
    post_id UUID PRIMARY KEY REFERENCES social_posts (id),
    attempts INT NOT NULL DEFAULT 0,
    last_error TEXT,
    since TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  // A comment's stamp carries its manifest (post's metadata CID, body CID, commenter) and is sent
  // from the comment's own address, derived from the commenter's social key.
  yield* sql`ALTER TABLE social_comments ADD COLUMN manifest_cid TEXT, ADD COLUMN address TEXT, ADD COLUMN derivation_path TEXT`
})
