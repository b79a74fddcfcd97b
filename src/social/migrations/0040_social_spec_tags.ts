import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// The tags as the spec reads them (docs/social.md, "Tags and suffixes"):
// - A post without media claims its body: the body is stored as its own item (text/plain) and
//   stamped C. `body_cid` names it; NULL for posts with media and for every post published
//   before this migration (their required stamps stay what they were, so none is owed anew).
// - A comment's X carries the comment body's CID; its manifest (the link to the post) moves to an
//   XM stamp of our own right after it. A comment whose X was still owed here is owed the new way:
//   its X row is pointed at the body and an XM row is added (its request id `<comment>/manifest`,
//   the (post, request) index being unique). X stamps already made keep their manifest CID and
//   read back as they are (the comment row holds both CIDs).
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE social_posts ADD COLUMN body_cid TEXT`
  yield* sql`INSERT INTO social_owed_stamps (post_id, tag, cid, comment_id, request_id)
    SELECT o.post_id, 'XM', c.manifest_cid, o.comment_id, o.request_id || '/manifest'
    FROM social_owed_stamps o JOIN social_comments c ON c.id = o.comment_id
    WHERE o.tag = 'X' AND o.txid IS NULL AND c.manifest_cid IS NOT NULL AND o.cid = c.manifest_cid
    ORDER BY o.id`
  yield* sql`UPDATE social_owed_stamps o SET cid = c.body_cid FROM social_comments c
    WHERE c.id = o.comment_id AND o.tag = 'X' AND o.txid IS NULL AND o.cid = c.manifest_cid`
})
