// A post's long id (uuid) from either id form a person types: the short id of its URL or the uuid.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { SHORT_ID } from "../accounts/socialKeys.ts"

export const findPostId = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = SHORT_ID.test(id)
      ? yield* sql<{ id: string }>`SELECT id::text AS id FROM social_posts WHERE short_id = ${id}`
      : /^[0-9a-f-]{36}$/.test(id) ? yield* sql<{ id: string }>`SELECT id::text AS id FROM social_posts WHERE id = ${id}` : []
    return Option.fromNullable(rows[0]?.id)
  })
