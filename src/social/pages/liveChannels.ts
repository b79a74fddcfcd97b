// Live channels (`social live add`): a stream id, the wallet that streams and a title; the embed
// pages read them (http/ContentHttp.ts).
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Adds the channel, or changes its wallet and title. */
export const saveLiveChannel = (channel: { readonly streamId: string; readonly wallet: string; readonly title: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`INSERT INTO social_live_channels (stream_id, wallet, title) VALUES (${channel.streamId}, ${channel.wallet}, ${channel.title})
      ON CONFLICT (stream_id) DO UPDATE SET wallet = EXCLUDED.wallet, title = EXCLUDED.title`))
