// Live channels (`social live add`): a stream id, the wallet that streams and a title; and the
// channel's stream, when it has one: the CID of its current HLS playlist in the content store
// (`social live stream`, docs/social.md "Live channels"). The embed pages and the channel's
// playlist route read them (http/ContentHttp.ts).
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ContentStore } from "../content/ContentStore.ts"
import { hlsPlaylist } from "../content/mediaTypes.ts"
import { servedState } from "../content/served.ts"

/** A playlist is a small text; anything larger is not served as one. */
export const livePlaylistBytesMax = 256 * 1024

export interface LiveChannel {
  readonly stream_id: string
  readonly wallet: string
  readonly title: string
  readonly playlist_cid: string | null
}

/** Adds the channel, or changes its wallet and title (its stream stays as it is). */
export const saveLiveChannel = (channel: { readonly streamId: string; readonly wallet: string; readonly title: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`INSERT INTO social_live_channels (stream_id, wallet, title) VALUES (${channel.streamId}, ${channel.wallet}, ${channel.title})
      ON CONFLICT (stream_id) DO UPDATE SET wallet = EXCLUDED.wallet, title = EXCLUDED.title`))

export const liveChannelById = (streamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<LiveChannel>`SELECT stream_id, wallet, title, playlist_cid FROM social_live_channels WHERE stream_id = ${streamId}`,
      (rows) => Option.fromNullable(rows[0])))

/** The wallet's channel (its latest, when it registered several). */
export const liveChannelByWallet = (wallet: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<LiveChannel>`SELECT stream_id, wallet, title, playlist_cid FROM social_live_channels WHERE wallet = ${wallet}
      ORDER BY created_at DESC LIMIT 1`, (rows) => Option.fromNullable(rows[0])))

/**
 * Whether the channel has a stream now: a playlist CID that is in the store, is an HLS playlist
 * and is served (not blocked by a moderator). Its CID, or none: the channel is offline.
 */
export const currentStream = (channel: LiveChannel) =>
  Effect.gen(function*() {
    if (channel.playlist_cid === null) return Option.none<string>()
    const stat = yield* (yield* ContentStore).stat(channel.playlist_cid)
    if (Option.isNone(stat) || stat.value.mediaType !== hlsPlaylist) return Option.none<string>()
    return (yield* servedState(channel.playlist_cid)) === "served" ? Option.some(channel.playlist_cid) : Option.none<string>()
  })

export type StreamRefusal = "unknown_channel" | "unknown_content" | "not_a_playlist"

/**
 * Sets the channel's current playlist (`playlistCid`), or takes it offline (null). The playlist
 * must already be in the store, typed as an HLS playlist by its bytes. A refusal names why.
 */
export const setLiveStream = (streamId: string, playlistCid: string | null) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (playlistCid !== null) {
      const stat = yield* (yield* ContentStore).stat(playlistCid)
      if (Option.isNone(stat)) return Option.some<StreamRefusal>("unknown_content")
      if (stat.value.mediaType !== hlsPlaylist) return Option.some<StreamRefusal>("not_a_playlist")
    }
    const updated = yield* sql`UPDATE social_live_channels SET playlist_cid = ${playlistCid}, stream_updated_at = now()
      WHERE stream_id = ${streamId} RETURNING 1`
    return updated.length === 0 ? Option.some<StreamRefusal>("unknown_channel") : Option.none<StreamRefusal>()
  })
