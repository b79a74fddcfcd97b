import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Stamps the service owes a post after the action that calls for them took effect (docs/social.md,
// "Stamps that could not go out"): an author takedown (T), a moderator pull (D), a renewal (R), a
// metadata update (M) and a comment (X). The row is written in the same transaction as the
// action's effect (state, charge, body, comment), and marked with its stamp's txid in the same
// transaction that records the stamp (Stamper.ts), so the Post entity's FinishStamps timer makes
// each owed stamp exactly once, whatever fails or is killed in between.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE social_owed_stamps (
    id BIGSERIAL PRIMARY KEY,
    post_id UUID NOT NULL REFERENCES social_posts (id),
    tag TEXT NOT NULL,
    cid TEXT NOT NULL,
    comment_id UUID,
    -- The Change that owes it (its requestId): a redelivered Change finds its stamp, not a second effect.
    request_id TEXT,
    txid TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX social_owed_stamps_request ON social_owed_stamps (post_id, request_id)`
  yield* sql`CREATE INDEX social_owed_stamps_unpaid ON social_owed_stamps (post_id) WHERE txid IS NULL`
  // A comment is written with its charge before its stamp exists (txid set when it is recorded).
  yield* sql`ALTER TABLE social_comments ALTER COLUMN txid DROP NOT NULL`
  // Member-signed comments: an xpub-only commenter's X is a signature request of its own (the
  // request id is the comment id), on the commented post but not the author's: any number may wait
  // at once, beside the author's one. account: the commenter; body_cid: the comment's text.
  yield* sql`ALTER TABLE social_signature_requests DROP CONSTRAINT social_signature_requests_action_check`
  yield* sql`ALTER TABLE social_signature_requests ADD CONSTRAINT social_signature_requests_action_check
    CHECK (action IN ('publish', 'takedown', 'renew', 'metadata', 'comment'))`
  yield* sql`ALTER TABLE social_signature_requests ADD COLUMN account TEXT REFERENCES social_accounts (address), ADD COLUMN body_cid TEXT`
  yield* sql`DROP INDEX social_signature_requests_awaiting`
  yield* sql`CREATE UNIQUE INDEX social_signature_requests_awaiting ON social_signature_requests (post_id) WHERE state = 'awaiting' AND action <> 'comment'`
})
