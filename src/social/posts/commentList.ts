// A post's comments as the public reads them (GET /api/public/post/{id}/comments): newest first,
// paged by a `before` cursor (a comment id), each with its body (read back from the content store
// by its CID, so verified like every read), its CIDs, its own derived address and its X stamp.
// A comment whose X is still owed shows txHash null.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { CommentList } from "../../../schemas/social/content.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { bodyCharsMax } from "./Composer.ts"

export const commentsPageDefault = 50

interface Row {
  readonly id: string
  readonly body_cid: string
  readonly manifest_cid: string | null
  readonly address: string | null
  readonly derivation_path: string | null
  readonly txid: string | null
  readonly op_return: string | null
  readonly created_at: Date
  readonly wallet: string
  readonly handle: string | null
  readonly asset_id: string
}

export const commentsOf = (postId: string, limit = commentsPageDefault, before?: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ContentStore
    const rows = yield* sql<Row>`SELECT c.id::text AS id, c.body_cid, c.manifest_cid, c.address, c.derivation_path, c.txid, s.op_return, c.created_at,
        COALESCE(a.identity_address, a.address) AS wallet, a.handle, a.asset_id
      FROM social_comments c JOIN social_accounts a ON a.address = c.author LEFT JOIN social_stamps s ON s.txid = c.txid
      WHERE c.post_id = ${postId}
        ${before === undefined ? sql`` : sql`AND (c.created_at, c.id) < (SELECT created_at, id FROM social_comments WHERE id = ${before}::uuid AND post_id = ${postId})`}
      ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit + 1}`
    const page = rows.slice(0, limit)
    // A body is at most bodyCharsMax characters of UTF-8: 4 bytes each at most.
    const bodies = yield* Effect.forEach(page, (r) => store.readAll(r.body_cid, bodyCharsMax * 4), { concurrency: 4 })
    return {
      postId,
      comments: page.map((r, i) => ({
        id: r.id,
        author: { wallet: r.wallet, handle: r.handle, assetId: r.asset_id },
        body: Option.match(bodies[i]!, { onNone: () => "", onSome: (b) => Buffer.from(b).toString("utf8") }),
        bodyCid: r.body_cid,
        manifestCid: r.manifest_cid,
        address: r.address,
        derivationPath: r.derivation_path,
        txHash: r.txid,
        opReturn: r.op_return,
        createdAt: new Date(r.created_at).toISOString()
      })),
      next: rows.length > limit ? page.at(-1)!.id : null
    } satisfies typeof CommentList.Type
  })
