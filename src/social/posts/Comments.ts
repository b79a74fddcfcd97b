// Comments (tag X), run by the commented post's entity (Change action "comment"). The stamp is the
// COMMENTER's: it is sent from the commenter's identity address, with the commenter's #asset id in
// its suffix, so the chain says who commented, not the post's author. Why the identity address
// and not a derived comment address: it is the address the account is known and signs in by, the
// chain-only timeline already walks it (next to CHV1G/CHV1N), and no new derivation path is
// needed for a reader to find an account's comments. Its OP_RETURN carries the CID of a small
// comment manifest, canonical JSON {version, type: "comment", post, postId, body, author,
// createdAt}: `post` is the post's metadata CID (the link to what was commented, checkable on the
// chain alone), `body` the CID of the comment's text (text/plain content).
import { SqlClient } from "@effect/sql"
import { Effect, Stream } from "effect"
import { type Change, PostRefused } from "../../../schemas/social/post.ts"
import { canonicalJson } from "../../crypto/canonicalJson.ts"
import { AppConfig } from "../../platform/Config.ts"
import { accountKey, type AccountRow } from "../accounts/Accounts.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { bodyCharsMax, type PostRow } from "./Composer.ts"
import { stamp } from "./Stamper.ts"

const refuse = (code: string, message: string) => new PostRefused({ code, message })

/** The comment manifest; its CID is what the X stamp carries. */
export const commentManifest = (m: { postMetadataCid: string; postId: string; bodyCid: string; author: string; createdAt: string }) =>
  canonicalJson({ version: 1, type: "comment", post: m.postMetadataCid, postId: m.postId, body: m.bodyCid, author: m.author, createdAt: m.createdAt })

/** X: `change.author` (an account key) comments `change.body` on `post`; charged to and stamped by the commenter. */
export const commentAsMember = (post: PostRow, change: Change) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const store = yield* ContentStore
    const body = change.body ?? ""
    if (change.author === undefined || body.length === 0 || body.length > bodyCharsMax) {
      return yield* refuse("invalid_parameter", `a comment has an author and a body of 1 to ${bodyCharsMax} characters`)
    }
    if (post.state !== "hosted" && post.state !== "grace") return yield* refuse("post_closed", `the post is ${post.state.replace("_", " ")}`)
    const [commenter] = yield* sql<AccountRow & { identity_address: string | null }>`SELECT address, asset_id, handle, xpub,
      balance_base::text AS balance_base, seed_enc, identity_address FROM social_accounts WHERE address = ${change.author}`
    if (commenter === undefined) return yield* refuse("unknown_account", `no social account ${change.author.slice(0, 40)}`)
    // After a succession the identity is the member's own wallet: the service holds no key for it.
    if (commenter.identity_address !== null) {
      return yield* refuse("no_service_key", "this account's identity address is the member's own wallet since its succession; the service cannot stamp for it")
    }
    const key = yield* accountKey(commenter, "identity")
    const price = config.socialPostPriceBase
    const bodyCid = (yield* store.put(Stream.succeed(Buffer.from(body, "utf8")), "text/plain")).cid
    const manifest = commentManifest({ postMetadataCid: post.metadata_cid, postId: post.id, bodyCid, author: commenter.address, createdAt: new Date().toISOString() })
    const manifestCid = (yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")).cid
    yield* Effect.gen(function*() {
      const charged = yield* sql`UPDATE social_accounts SET balance_base = balance_base - ${price.toString()}
        WHERE address = ${commenter.address} AND balance_base >= ${price.toString()} RETURNING 1`
      if (charged.length === 0) return yield* refuse("insufficient_balance", `a comment costs ${price} base units`)
      yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${commenter.address}, ${price.toString()}, 'comment', ${post.id})`
    }).pipe(sql.withTransaction)
    const s = yield* stamp({
      address: commenter.address, privateKey: key.privateKey, account: commenter.address, assetId: commenter.asset_id, postId: post.id, tag: "X", cid: manifestCid
    })
    yield* sql`INSERT INTO social_comments (id, post_id, author, body_cid, manifest_cid, txid)
      VALUES (${change.requestId}, ${post.id}, ${commenter.address}, ${bodyCid}, ${manifestCid}, ${s.txid})`
    return s
  })
