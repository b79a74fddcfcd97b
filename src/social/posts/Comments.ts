// Comments (tag X), run by the commented post's entity (Change action "comment"). The stamp is the
// COMMENTER's: it is sent from an address derived from the commenter's own social key, with the
// commenter's #asset id in its suffix, so the chain says who commented, not the post's author.
// The spec: "every account, post and comment has a derived chain address". Comment addresses are
// drawn from the same sequence as the account's post addresses (m/44'/696969'/1101'/{i}/0/0, the
// account's next_post_index): the chain-only timeline, which walks that sequence from the xpub,
// finds an account's comments with no new path to learn, and the key is the service-held seed's,
// so commenting keeps working after a succession (the identity key is then the member's).
// Two stamps from that address: X carries the CID of the comment's text (text/plain), as the spec
// reads X ("the service CID of a new comment body"); XM, a tag of our own right after it, carries
// the CID of a small comment manifest, canonical JSON {version, type: "comment", post, postId,
// body, author, createdAt}: `post` is the post's metadata CID, the link to what was commented,
// checkable on the chain alone.
import { SqlClient } from "@effect/sql"
import { Effect, Stream } from "effect"
import { type Change, PostRefused } from "../../../schemas/social/post.ts"
import { canonicalJson } from "../../crypto/canonicalJson.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { accountKey, type AccountRow } from "../accounts/Accounts.ts"
import { postPath } from "../accounts/socialKeys.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { bodyCharsMax, type PostRow } from "./Composer.ts"
import { owe } from "./owedRows.ts"

const refuse = (code: string, message: string) => new PostRefused({ code, message })

/** The comment manifest; its CID is what the XM stamp carries. */
export const commentManifest = (m: { postMetadataCid: string; postId: string; bodyCid: string; author: string; createdAt: string }) =>
  canonicalJson({ version: 1, type: "comment", post: m.postMetadataCid, postId: m.postId, body: m.bodyCid, author: m.author, createdAt: m.createdAt })

/** The stamps a comment owes, in order: X (its body), then XM (its manifest). */
export const commentStamps = (c: { readonly bodyCid: string; readonly manifestCid: string }) =>
  [{ tag: "X" as const, cid: c.bodyCid }, { tag: "XM" as const, cid: c.manifestCid }]

/** The request id of a comment's XM owed row: (post, request) is unique, and the X holds the comment's own. */
export const manifestRequestId = (commentId: string) => `${commentId}/manifest`

/** X then XM: `change.author` (an account key) comments `change.body` on `post`; charged to the commenter; the owed X's id. */
export const commentAsMember = (post: PostRow, change: Change) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* SocialConfig
    const store = yield* ContentStore
    const body = change.body ?? ""
    if (change.author === undefined || body.length === 0 || body.length > bodyCharsMax) {
      return yield* refuse("invalid_parameter", `a comment has an author and a body of 1 to ${bodyCharsMax} characters`)
    }
    // The same Change again (redelivered): the comment is written, its owed X names it.
    const [again] = yield* sql<{ id: string }>`SELECT id::text AS id FROM social_owed_stamps WHERE comment_id = ${change.requestId} ORDER BY social_owed_stamps.id LIMIT 1`
    if (again !== undefined) return again.id
    if (post.state !== "hosted" && post.state !== "grace") return yield* refuse("post_closed", `the post is ${post.state.replace("_", " ")}`)
    const [commenter] = yield* sql<AccountRow & { identity: string }>`SELECT address, asset_id, handle, xpub, balance_base::text AS balance_base, seed_enc,
      COALESCE(identity_address, address) AS identity FROM social_accounts WHERE address = ${change.author}`
    if (commenter === undefined) return yield* refuse("unknown_account", `no social account ${change.author.slice(0, 40)}`)
    if (commenter.seed_enc === null) yield* accountKey(commenter, 0) // the member's own wallet holds the keys: no_service_key
    const price = config.socialPostPriceBase
    const bodyCid = (yield* store.put(Stream.succeed(Buffer.from(body, "utf8")), "text/plain")).cid
    const manifest = commentManifest({ postMetadataCid: post.metadata_cid, postId: post.id, bodyCid, author: commenter.identity, createdAt: new Date().toISOString() })
    const manifestCid = (yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")).cid
    // The charge, the comment (its own address) and the X and XM it owes commit together; the Post
    // entity makes the stamps (owedStamps.ts), now or on its FinishStamps timer.
    return yield* Effect.gen(function*() {
      const [charged] = yield* sql<{ idx: number }>`UPDATE social_accounts SET balance_base = balance_base - ${price.toString()},
        next_post_index = next_post_index + 1 WHERE address = ${commenter.address} AND balance_base >= ${price.toString()}
        RETURNING next_post_index - 1 AS idx`
      if (charged === undefined) return yield* refuse("insufficient_balance", `a comment costs ${price} base units`)
      yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${commenter.address}, ${price.toString()}, 'comment', ${post.id})`
      const key = yield* accountKey(commenter, charged.idx)
      yield* sql`INSERT INTO social_comments (id, post_id, author, body_cid, manifest_cid, address, derivation_path, txid)
        VALUES (${change.requestId}, ${post.id}, ${commenter.address}, ${bodyCid}, ${manifestCid}, ${key.address}, ${postPath(charged.idx)}, NULL)`
      const owedX = yield* owe(post.id, "X", bodyCid, change.requestId, change.requestId)
      yield* owe(post.id, "XM", manifestCid, manifestRequestId(change.requestId), change.requestId)
      return owedX
    }).pipe(sql.withTransaction)
  })
