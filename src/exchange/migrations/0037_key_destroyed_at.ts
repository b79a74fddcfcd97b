import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// When a delegated key became unrecoverable (issue 23.5; `authorizations show`'s keyDestroyedAt).
// - authorization_events.key_epoch: on a grant's 'granted' row, the key epoch its key was sealed
//   under (the epoch of expiry + the sweep grace). Its end is when the key is destroyed.
// - key_epoch_chain.ratcheted_epoch: the highest epoch a node's ratchet has reached (its file
//   rewritten), so the end of an epoch is shown only once a node has moved past it.
// Grants live when this runs get their epoch from their sealed key (`e1:<epoch>:…`).
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE authorization_events ADD COLUMN key_epoch BIGINT`
  yield* sql`ALTER TABLE key_epoch_chain ADD COLUMN ratcheted_epoch BIGINT`
  yield* sql`UPDATE authorization_events e SET key_epoch = split_part(k.key_enc, ':', 2)::bigint
    FROM authorization_keys k WHERE k.grant_id = e.grant_id AND e.kind = 'granted' AND k.key_enc ~ '^e1:[0-9]+:'`
})
