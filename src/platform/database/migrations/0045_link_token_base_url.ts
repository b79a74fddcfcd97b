import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// The public base URL a link token was issued for (link_tokens, shared by the desk's and social's
// link-token entities, platform/identity/linkTokens.ts): its manifest's `from` and `callback_url`
// come from it on whichever node serves or redeems the token, so a link works whatever node its
// entity runs on. NULL for tokens issued before: those take the serving node's own URL, as before.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE link_tokens ADD COLUMN IF NOT EXISTS base_url TEXT`
})
