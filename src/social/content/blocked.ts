// Content a moderator pulled (docs/social.md, "Moderation blocks the content"): a pull blocks the
// CIDs of the pulled post, so the same bytes are neither served (410 content_blocked) nor published
// again under another post (403 media_blocked) until an operator lifts the block
// (`social moderate --lift CID`). Rows are (post, CID), each written by its post's Post entity:
// `blockPost` in the pull's transaction, `liftBlock` on its LiftBlock message.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Blocks every CID the post holds (its manifests and media); run it inside the pull's transaction. The CIDs. */
export const blockPost = (postId: string, reason: string | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ cid: string }>`INSERT INTO social_blocked_cids (post_id, cid, reason)
      SELECT post_id, cid, ${reason} FROM social_post_cids WHERE post_id = ${postId}
      ON CONFLICT (post_id, cid) DO NOTHING RETURNING cid`, (rows) => rows.map((r) => r.cid)))

/** The CIDs a post's pull blocks now (none lifted), in a stable order. */
export const blockedByPost = (postId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ cid: string }>`SELECT cid FROM social_blocked_cids WHERE post_id = ${postId} AND lifted_at IS NULL ORDER BY cid`,
      (rows) => rows.map((r) => r.cid)))

/** The first of these CIDs that is blocked now, if any. */
export const firstBlocked = (cids: ReadonlyArray<string>) =>
  cids.length === 0 ? Effect.succeed(undefined) : Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ cid: string }>`SELECT cid FROM social_blocked_cids WHERE cid = ANY(${[...cids]}::text[]) AND lifted_at IS NULL LIMIT 1`,
      (rows) => rows[0]?.cid))

/** The posts whose pull blocks this CID now (the entities a lift goes through). */
export const blockingPosts = (cid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ post_id: string }>`SELECT post_id::text AS post_id FROM social_blocked_cids WHERE cid = ${cid} AND lifted_at IS NULL ORDER BY blocked_at`,
      (rows) => rows.map((r) => r.post_id)))

/** Ends the post's block of the CID (the row stays, with when and why); the time it ended, or undefined if none was active. */
export const liftBlock = (postId: string, cid: string, reason: string | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ lifted_at: Date }>`UPDATE social_blocked_cids SET lifted_at = now(), lift_reason = ${reason}
      WHERE post_id = ${postId} AND cid = ${cid} AND lifted_at IS NULL RETURNING lifted_at`, (rows) => rows[0]?.lifted_at))
