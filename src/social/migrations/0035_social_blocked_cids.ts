import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Content a moderator pulled (docs/social.md, "Moderation blocks the content"): a pull (D) blocks
// every CID the pulled post holds (its manifests and media), not only the post, so the same bytes
// cannot come back under another account's post. One row per (post, CID), written by that post's
// Post entity in the pull's own transaction; `social moderate --lift CID` ends every block of a
// CID through the entities that hold one (lifted_at set, the row kept as the record).
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE social_blocked_cids (
    post_id UUID NOT NULL REFERENCES social_posts (id),
    cid TEXT NOT NULL,
    reason TEXT,
    blocked_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    lifted_at TIMESTAMPTZ,
    lift_reason TEXT,
    PRIMARY KEY (post_id, cid)
  )`
  // Serving and publishing ask "is this CID blocked now?".
  yield* sql`CREATE INDEX social_blocked_cids_active ON social_blocked_cids (cid) WHERE lifted_at IS NULL`
})
