// Comments by xpub-only commenters (docs/social.md, "Member-signed stamps"): as for a commenter
// the service holds a key for (Comments.ts), the comment's X is stamped from the comment's own
// address derived from the COMMENTER's key (…/1101'/{i}/0/0, i their next post index), X carrying
// the CID of the comment's text and XM that of its manifest; but the commenter's wallet signs them. The commented post's entity
// charges the comment, funds a coin per stamp and builds X and XM as PSBTs (a signature request of its own,
// id = the comment id, beside any the post's author has waiting); the comment exists once the signed
// stamps are recorded (signedStamps.ts), and lapses, refunded less its coin, at the end of the window.
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, Stream } from "effect"
import type { CommentUnsigned } from "../../../schemas/social/post.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { memberSigns } from "../accounts/signing.ts"
import { postSteps } from "../accounts/socialKeys.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { commentManifest, commentStamps } from "./Comments.ts"
import { bodyCharsMax } from "./Composer.ts"
import { postKeyFromXpub } from "./psbt.ts"
import { accountOf, asRefusal, loadPost, openRequest, refuse, requestById, unsignedRows, viewOf } from "./signatureRequests.ts"
import { refuseOrRetry } from "../../platform/entity/refuseOrRetry.ts"

export const commentUnsigned = (c: CommentUnsigned, deadline: (requestId: string, dueAtMs: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* SocialConfig
    const store = yield* ContentStore
    const ledger = yield* UtxoLedger
    const post = yield* loadPost(c.postId)
    const existing = yield* requestById(c.requestId)
    if (Option.isSome(existing)) return viewOf(post, existing.value, yield* unsignedRows(c.requestId))
    if (c.body.length === 0 || c.body.length > bodyCharsMax) return yield* refuse("invalid_parameter", `a comment has a body of 1 to ${bodyCharsMax} characters`)
    if (post.state !== "hosted" && post.state !== "grace") return yield* refuse("post_closed", `the post is ${post.state.replace("_", " ")}`)
    const commenter = yield* accountOf(c.author)
    if (!memberSigns(commenter) || commenter.xpub === null) return yield* refuse("no_service_key", "this account has neither a service key nor a linked xpub")
    const price = config.socialPostPriceBase
    if (BigInt(commenter.balance_base) < price) return yield* refuse("insufficient_balance", `a comment costs ${price} base units`)
    // The comment's own index (its address); taken before funding, so a failed funding leaves a gap.
    const [taken] = yield* sql<{ idx: number }>`UPDATE social_accounts SET next_post_index = next_post_index + 1
      WHERE address = ${commenter.address} RETURNING next_post_index - 1 AS idx`
    const index = taken!.idx
    const key = Either.getOrThrowWith(postKeyFromXpub(commenter.xpub, postSteps(index), ledger.params), (m) => new Error(m))
    const derivationPath = `${commenter.xpub_path ?? `m/44'/${ledger.params.coinType}'/1101'`}/${postSteps(index).join("/")}`
    const [identity] = yield* sql<{ identity: string }>`SELECT COALESCE(identity_address, address) AS identity FROM social_accounts WHERE address = ${commenter.address}`
    const bodyCid = (yield* store.put(Stream.succeed(Buffer.from(c.body, "utf8")), "text/plain")).cid
    const manifest = commentManifest({ postMetadataCid: post.metadata_cid, postId: post.id, bodyCid, author: identity!.identity, createdAt: new Date().toISOString() })
    const manifestCid = (yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")).cid
    const view = yield* openRequest(post, { ...commenter, balance_base: commenter.balance_base }, c.requestId, `comment-unsigned:${c.postId}:${c.requestId}`, "comment",
      commentStamps({ bodyCid, manifestCid }), { chargedBase: price, comment: { index, address: key.address, derivationPath, bodyCid } })
    yield* deadline(c.requestId, Date.parse(view.expiresAt))
    return view
  }).pipe(refuseOrRetry(asRefusal))
