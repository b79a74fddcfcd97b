import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Member-signed stamps (docs/social.md, "Member-signed stamps"): accounts linked by xpub only
// post through transactions the service builds unsigned (PSBTs) and the member signs. A post
// waits for them in `awaiting_signature`; one that never gets them ends `unsigned`.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE social_posts DROP CONSTRAINT social_posts_state_check`
  yield* sql`ALTER TABLE social_posts ADD CONSTRAINT social_posts_state_check
    CHECK (state IN ('hosted', 'grace', 'unpinned', 'taken_down', 'moderated', 'awaiting_signature', 'unsigned'))`
  // One author action waiting for signatures: its stamps were funded (one sponsor transaction, one
  // coin per stamp) and built; `message_key` is the Post entity message that asked for it, so a
  // redelivered message finds it instead of funding again. body/tags: a metadata change's new values,
  // applied when it is signed.
  yield* sql`CREATE TABLE social_signature_requests (
    id UUID PRIMARY KEY,
    message_key TEXT NOT NULL UNIQUE,
    post_id UUID NOT NULL REFERENCES social_posts (id),
    action TEXT NOT NULL CHECK (action IN ('publish', 'takedown', 'renew', 'metadata')),
    body TEXT,
    tags JSONB,
    charged_base BIGINT NOT NULL DEFAULT 0 CHECK (charged_base >= 0),
    funding_txid TEXT NOT NULL,
    funding_hex TEXT NOT NULL,
    funded_sats BIGINT NOT NULL CHECK (funded_sats >= 0),
    state TEXT NOT NULL CHECK (state IN ('awaiting', 'signed', 'expired')),
    expires_at_ms BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX social_signature_requests_awaiting ON social_signature_requests (post_id) WHERE state = 'awaiting'`
  // Each stamp of a request as built: the unsigned transaction (empty scriptSig) a signed one must
  // equal, and the PSBT handed to the wallet. txid is set once the signed bytes are in social_stamps.
  yield* sql`CREATE TABLE social_unsigned_stamps (
    request_id UUID NOT NULL REFERENCES social_signature_requests (id),
    n INT NOT NULL,
    address TEXT NOT NULL,
    derivation_path TEXT NOT NULL,
    seq INT NOT NULL,
    tag TEXT NOT NULL,
    cid TEXT NOT NULL,
    op_return TEXT NOT NULL CHECK (octet_length(op_return) <= 80),
    unsigned_hex TEXT NOT NULL,
    psbt TEXT NOT NULL,
    txid TEXT,
    PRIMARY KEY (request_id, n)
  )`
})
