import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Every node polls each second for keys revoked since its last poll (src/exchange/auth/ApiKeys.ts);
// a partial index keeps that an index scan over the few revoked keys, not a scan of all keys.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX api_keys_revoked_at ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL`
})
