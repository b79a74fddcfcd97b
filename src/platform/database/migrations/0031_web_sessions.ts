import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Wallet sign-in and browser sessions for every listener (issue 24): the social tables become the
// shared ones, each row naming its service ("exchange", "desk", "social"), so one SignInChallenge
// entity and one session cache serve the three listeners and a session opens only its own service.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE social_signin_challenges RENAME TO signin_challenges`
  yield* sql`ALTER TABLE signin_challenges ADD COLUMN service TEXT NOT NULL DEFAULT 'social'`
  yield* sql`ALTER TABLE social_sessions RENAME TO web_sessions`
  yield* sql`ALTER TABLE web_sessions ADD COLUMN service TEXT NOT NULL DEFAULT 'social'`
  yield* sql`ALTER INDEX social_sessions_address RENAME TO web_sessions_address`
  yield* sql`ALTER INDEX social_sessions_revoked RENAME TO web_sessions_revoked`
  yield* sql`CREATE INDEX web_sessions_service_address ON web_sessions (service, address)`
})
