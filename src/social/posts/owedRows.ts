// The write side of owed stamps (owedStamps.ts), apart so the composer can record one in its own
// transaction without importing what makes them.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { StampTag } from "./opReturn.ts"

/** Records a stamp the post is owed; run it inside the transaction of the action's effect. Its id. */
export const owe = (postId: string, tag: StampTag, cid: string, requestId: string, commentId: string | null = null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ id: string }>`INSERT INTO social_owed_stamps (post_id, tag, cid, comment_id, request_id)
      VALUES (${postId}, ${tag}, ${cid}, ${commentId}, ${requestId}) RETURNING id::text AS id`, (rows) => rows[0]!.id))

/** The owed stamp a Change already wrote (a redelivered message): its effect is done, only the stamp may be missing. */
export const owedBy = (postId: string, requestId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ id: string }>`SELECT id::text AS id FROM social_owed_stamps WHERE post_id = ${postId} AND request_id = ${requestId}`,
      (rows) => rows[0]?.id))
