import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// A live channel's stream (docs/social.md, "Live channels"): the CID of its current HLS playlist
// in the content store, set by the ingest (`social live stream`) each time the playlist changes,
// NULL while the channel is offline. The embed plays it through /live/{id}/index.m3u8.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE social_live_channels ADD COLUMN playlist_cid TEXT, ADD COLUMN stream_updated_at TIMESTAMPTZ`
})
