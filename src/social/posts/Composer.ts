// What the composer does for a post (spec: "publishing goes through the service's own composer
// ... which handle pinning, wallet derivation, OP_RETURN stamping and fees"), run by the Post
// entity: charge the balance, derive the post's own address, store the manifest by CID, stamp
// C for each media item (for a post without media, C for its body, stored as an item of its own),
// CHV1P for the manifest (the lookup proof) and P for the paid period.
// Everything is in rows before the stamps go out, and `ensureStamps` sends any stamp missing, so
// a retry after a crash finishes the same post rather than making another.
import { SqlClient } from "@effect/sql"
import { Effect, Option, Stream } from "effect"
import { type Change, PostRefused, type PostReceipt, type PostState, type Publish } from "../../../schemas/social/post.ts"
import { canonicalJson } from "../../crypto/canonicalJson.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { accountKey, type AccountRow, findAccount } from "../accounts/Accounts.ts"
import { memberSigns } from "../accounts/signing.ts"
import { postPath, shortIdOf } from "../accounts/socialKeys.ts"
import { firstBlocked } from "../content/blocked.ts"
import { ContentStore } from "../content/ContentStore.ts"
import type { StampTag } from "./opReturn.ts"
import { stamp } from "./Stamper.ts"
import { moderationStamp } from "./moderationStamp.ts"
import { owe } from "./owedRows.ts"

/** Indexes skipped at most when a short id is already taken (1 in ~3.8e10 per post). */
const SHORT_ID_ATTEMPTS = 8
export const bodyCharsMax = 10_000
export const tagsMax = 20
export const mediaMax = 20

export interface PostRow {
  readonly id: string
  readonly short_id: string
  readonly author: string
  readonly post_index: number
  readonly address: string
  readonly derivation_path: string
  readonly kind: string
  readonly body: string
  readonly tags: ReadonlyArray<string>
  readonly media_cids: ReadonlyArray<string>
  readonly metadata_cid: string
  /** A post without media: its body's CID, stamped C. NULL for media posts and posts older than migration 0040. */
  readonly body_cid: string | null
  readonly state: PostState
  readonly paid_until_ms: string
  readonly timer_n: string
  readonly moderation_reason: string | null
  readonly created_at: Date
}

export const postColumns = "id::text AS id, short_id, author, post_index, address, derivation_path, kind, body, tags, media_cids, metadata_cid, body_cid, state, paid_until_ms::text AS paid_until_ms, timer_n::text AS timer_n, moderation_reason, created_at"

export const findPost = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql.unsafe<PostRow>(`SELECT ${postColumns} FROM social_posts WHERE id = $1`, [id]), (rows) => Option.fromNullable(rows[0])))

const refuse = (code: string, message: string) => new PostRefused({ code, message })

/** The content a post claims (C): its media items, or, for a post without media, its body item. */
export const claimedCids = (post: Pick<PostRow, "media_cids" | "body_cid">): ReadonlyArray<string> =>
  [...new Set(post.body_cid === null ? post.media_cids : [...post.media_cids, post.body_cid])]

/** The stamps a post must have: C per claimed item, CHV1P for its manifest, P for its first period. */
export const requiredStamps = (post: PostRow): ReadonlyArray<{ tag: StampTag; cid: string }> => [
  ...claimedCids(post).map((cid) => ({ tag: "C" as const, cid })),
  { tag: "CHV1P", cid: post.metadata_cid },
  { tag: "P", cid: post.metadata_cid }
]

export interface StampRow {
  readonly txid: string
  readonly tag: StampTag
  readonly cid: string
  readonly op_return: string
  readonly seq: number
}

export const stampsOf = (postId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<StampRow>`SELECT txid, tag, cid, op_return, seq FROM social_stamps WHERE post_id = ${postId} ORDER BY seq`)

/** Sends a stamp of `tag` for the post from its own address (`owedId`: the owed row it pays, owedStamps.ts). */
export const stampPost = (post: PostRow, account: AccountRow, tag: StampTag, cid: string, owedId?: string) =>
  Effect.gen(function*() {
    // A member-signed post (xpub only): the service signs only a moderator's D, from its own address.
    if (memberSigns(account) && tag === "D") return yield* moderationStamp(post, account, cid, owedId)
    const key = yield* accountKey(account, post.post_index)
    // An owed stamp is made once by its owed row; a required one once per tag and CID (Stamper.ts).
    return yield* stamp({
      address: post.address, privateKey: key.privateKey, account: account.address, assetId: account.asset_id, postId: post.id, tag, cid,
      ...(owedId === undefined ? { once: true } : { owedId })
    })
  })

/** Sends whichever required stamp is missing; returns all of the post's stamps. */
export const ensureStamps = (post: PostRow, account: AccountRow) =>
  Effect.gen(function*() {
    const have = yield* stampsOf(post.id)
    // A member-signed post's stamps come signed by the member (memberSigned.ts), never from here.
    if (memberSigns(account)) return have
    for (const need of requiredStamps(post)) {
      if (!have.some((s) => s.tag === need.tag && s.cid === need.cid)) yield* stampPost(post, account, need.tag, need.cid)
    }
    return yield* stampsOf(post.id)
  })

/** The receipt; `stamping` is "pending" while a required stamp is not recorded (StampCompletion.ts finishes it). */
export const receiptOf = (post: PostRow, stamps: ReadonlyArray<StampRow>): PostReceipt => {
  const proof = stamps.find((s) => s.tag === "CHV1P")
  const done = requiredStamps(post).every((need) => stamps.some((s) => s.tag === need.tag && s.cid === need.cid))
  return {
    postId: post.id, shortId: post.short_id, metadataCid: post.metadata_cid, mediaCids: [...post.media_cids],
    txHash: proof?.txid ?? null, opReturn: proof?.op_return ?? null, stamping: done ? "done" : "pending"
  }
}

const accountOf = (address: string) =>
  Effect.flatMap(findAccount(address), Option.match({
    onNone: () => Effect.fail(refuse("unknown_account", `no social account ${address.slice(0, 40)}`)),
    onSome: Effect.succeed
  }))

export const checkText = (body: string, tags: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (body.length > bodyCharsMax) return yield* refuse("invalid_parameter", `body is over ${bodyCharsMax} characters`)
    if (tags.length > tagsMax || tags.some((t) => !/^[\p{L}\p{N}_-]{1,40}$/u.test(t))) {
      return yield* refuse("invalid_parameter", `tags: at most ${tagsMax}, each 1 to 40 letters, digits, _ or -`)
    }
  })

/** Checks what a publish asks for before anything is charged. */
export const checkPublish = (p: Publish) =>
  Effect.gen(function*() {
    yield* checkText(p.body, p.tags)
    if (p.mediaCids.length > mediaMax) return yield* refuse("invalid_parameter", `at most ${mediaMax} media items`)
    const store = yield* ContentStore
    for (const cid of p.mediaCids) {
      if (Option.isNone(yield* store.stat(cid))) return yield* refuse("unknown_media", `no uploaded content ${cid.slice(0, 64)}`)
    }
    // A moderator's pull blocks the content itself: another post cannot bring it back.
    const blocked = yield* firstBlocked(p.mediaCids)
    if (blocked !== undefined) return yield* refuse("media_blocked", `media ${blocked} was pulled by a moderator and cannot be published`)
  })

/**
 * A post without media claims its body (spec: C, "content first lands"): the body is stored as an
 * item of its own (text/plain, UTF-8), so its C names bytes the gateway serves. Its CID, or null
 * for a post with media (its media items are what it claims).
 */
export const storeBodyClaim = (p: Pick<Publish, "body" | "mediaCids">) =>
  p.mediaCids.length > 0
    ? Effect.succeed(null)
    : Effect.map(Effect.flatMap(ContentStore, (store) => store.put(Stream.succeed(Buffer.from(p.body, "utf8")), "text/plain")), (s): string | null => s.cid)

/** The CIDs a post holds (served while it is hosted, blocked by its pull): its manifest and what it claims. */
export const recordPostCids = (postId: string, cids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(new Set(cids), (cid) => sql`INSERT INTO social_post_cids (post_id, cid) VALUES (${postId}, ${cid})`, { discard: true }))

/** Publish: the post's rows (charge, manifest, post) in one transaction, then its stamps. */
export const publish = (p: Publish) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* SocialConfig
    const store = yield* ContentStore
    const existing = yield* findPost(p.postId)
    if (Option.isSome(existing)) {
      const account = yield* accountOf(existing.value.author)
      return { post: existing.value, receipt: receiptOf(existing.value, yield* ensureStamps(existing.value, account)), created: false }
    }
    yield* checkPublish(p)
    const post = yield* Effect.gen(function*() {
      const [account] = yield* sql<AccountRow & { next_post_index: number; identity: string }>`SELECT address, asset_id, handle, xpub, balance_base::text AS balance_base,
        seed_enc, next_post_index, COALESCE(identity_address, address) AS identity FROM social_accounts WHERE address = ${p.author} FOR UPDATE`
      if (account === undefined) return yield* refuse("unknown_account", `no social account ${p.author.slice(0, 40)}`)
      const price = config.socialPostPriceBase
      if (BigInt(account.balance_base) < price) {
        return yield* refuse("insufficient_balance", `a post costs ${price} base units; the balance is ${account.balance_base}`)
      }
      let index = account.next_post_index
      let key = yield* accountKey(account, index)
      for (let i = 0; i < SHORT_ID_ATTEMPTS && (yield* sql`SELECT 1 FROM social_posts WHERE short_id = ${shortIdOf(key.address)}`).length > 0; i++) {
        index += 1
        key = yield* accountKey(account, index)
      }
      const createdAt = new Date()
      const manifest = canonicalJson({
        version: 1,
        kind: p.kind,
        body: p.body,
        tags: [...p.tags],
        media: [...p.mediaCids],
        author: account.identity, // the wallet the account is known by now (docs/social.md, "Succession")
        address: key.address,
        derivationPath: postPath(index),
        createdAt: createdAt.toISOString()
      })
      const stored = yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")
      const bodyCid = yield* storeBodyClaim(p)
      const paidUntilMs = createdAt.getTime() + config.socialHostingPeriodMs
      yield* sql`UPDATE social_accounts SET balance_base = balance_base - ${price.toString()}, next_post_index = ${index + 1} WHERE address = ${p.author}`
      yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${p.author}, ${price.toString()}, 'post', ${p.postId})`
      yield* sql`INSERT INTO social_posts (id, short_id, author, post_index, address, derivation_path, kind, body, tags, media_cids, metadata_cid, body_cid, state, paid_until_ms, created_at)
        VALUES (${p.postId}, ${shortIdOf(key.address)}, ${p.author}, ${index}, ${key.address}, ${postPath(index)}, ${p.kind}, ${p.body},
          ${JSON.stringify(p.tags)}::jsonb, ${JSON.stringify(p.mediaCids)}::jsonb, ${stored.cid}, ${bodyCid}, 'hosted', ${paidUntilMs}, ${createdAt})`
      yield* recordPostCids(p.postId, [stored.cid, ...claimedCids({ media_cids: p.mediaCids, body_cid: bodyCid })])
      return Option.getOrThrow(yield* findPost(p.postId))
    }).pipe(sql.withTransaction)
    const account = yield* accountOf(post.author)
    return { post, receipt: receiptOf(post, yield* ensureStamps(post, account)), created: true }
  })

/**
 * The post's next manifest for an M (its new body or tags, checked), naming the previous one
 * (the latest stamped CHV1P or M), stored by CID; both the service-keyed and the member-signed
 * metadata change use it.
 */
export const nextManifest = (post: PostRow, change: { readonly body?: string | undefined; readonly tags?: ReadonlyArray<string> | undefined }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ContentStore
    const body = change.body ?? post.body
    const tags = change.tags ?? post.tags
    yield* checkText(body, tags)
    const [latest] = yield* sql<{ cid: string }>`SELECT cid FROM social_stamps WHERE post_id = ${post.id} AND tag IN ('CHV1P', 'M') ORDER BY seq DESC LIMIT 1`
    const manifest = canonicalJson({
      version: 1, kind: post.kind, body, tags: [...tags], media: [...post.media_cids], author: post.author, address: post.address,
      derivationPath: post.derivation_path, createdAt: new Date(post.created_at).toISOString(), previous: latest?.cid ?? post.metadata_cid,
      updatedAt: new Date().toISOString()
    })
    const stored = yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")
    return { body, tags, stored }
  })

/** M: a new manifest naming the previous one, with the new body or tags; the post shows them. */
export const updateMetadata = (post: PostRow, account: AccountRow, change: Change) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { body, tags, stored } = yield* nextManifest(post, change)
    // The new body and the M it owes commit together; the Post entity makes the stamp (owedStamps.ts).
    return yield* Effect.gen(function*() {
      yield* sql`UPDATE social_posts SET body = ${body}, tags = ${JSON.stringify(tags)}::jsonb WHERE id = ${post.id}`
      yield* sql`INSERT INTO social_post_cids (post_id, cid) VALUES (${post.id}, ${stored.cid}) ON CONFLICT DO NOTHING`
      return yield* owe(post.id, "M", stored.cid, change.requestId)
    }).pipe(sql.withTransaction)
  })
