// Idempotency-Key for POST /api/social/posts (IETF draft-ietf-httpapi-idempotency-key-header;
// docs/social.md, "Retrying a publish"). The key is scoped to the account: the first request with
// a key claims a post id for (account, key), and every later request with the same key and the
// same payload names that same post, so the Post entity finishes the one post (charged once)
// instead of making another. The same key with another payload is refused (422, the draft's
// "Idempotency-Key is already used for a different request payload"). A first attempt refused
// before anything was written (402, 404, …) releases its key, so a retry after topping up runs.
// Keys expire after `idempotencyKeyHours` (platform/http/idempotencyKey.ts, shared with the desk).
// The Post entity is the only writer of the keys (`underKey`, as it writes its post's rows); the
// route only reads which post a key names (`keyedPost`) to know which entity to send to.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { PostRefused } from "../../../schemas/social/post.ts"
import { canonicalJson, type CanonicalValue } from "../../crypto/canonicalJson.ts"
import { sha256Hex } from "../../crypto/token.ts"
import { fingerprintOf, idempotencyKeyHours } from "../../platform/http/idempotencyKey.ts"

export { fingerprintOf, idempotencyKeyHours, parseIdempotencyKey } from "../../platform/http/idempotencyKey.ts"

export type Claim =
  | { readonly _tag: "Fresh"; readonly postId: string }
  | { readonly _tag: "Replay"; readonly postId: string }
  | { readonly _tag: "Mismatch" }

/** Claims `freshPostId` for (account, key), or answers the post id the key already names. */
export const claimPostId = (account: string, key: string, fingerprint: string, freshPostId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The account's expired keys go first (a sweep per account, bounded by its own keys): an
    // expired key is free again.
    yield* sql`DELETE FROM social_post_idempotency WHERE account = ${account}
      AND created_at < now() - make_interval(hours => ${idempotencyKeyHours})`
    const inserted = yield* sql<{ post_id: string }>`INSERT INTO social_post_idempotency (account, key, post_id, fingerprint)
      VALUES (${account}, ${key}, ${freshPostId}, ${fingerprint}) ON CONFLICT (account, key) DO NOTHING RETURNING post_id::text AS post_id`
    if (inserted.length > 0) return { _tag: "Fresh", postId: freshPostId } satisfies Claim as Claim
    const [row] = yield* sql<{ post_id: string; fingerprint: string }>`SELECT post_id::text AS post_id, fingerprint FROM social_post_idempotency
      WHERE account = ${account} AND key = ${key}`
    if (row === undefined) return yield* Effect.dieMessage("idempotency key vanished between insert and read")
    return (row.fingerprint === fingerprint ? { _tag: "Replay", postId: row.post_id } : { _tag: "Mismatch" }) satisfies Claim as Claim
  })

/** The post a live key names for the account, with the fingerprint of its first request (a read). */
export const keyedPost = (account: string, key: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ post_id: string; fingerprint: string }>`SELECT post_id::text AS post_id, fingerprint FROM social_post_idempotency
      WHERE account = ${account} AND key = ${key} AND created_at >= now() - make_interval(hours => ${idempotencyKeyHours})`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => ({ postId: r.post_id, fingerprint: r.fingerprint })))
    ))

/** What a publish under a key carries (schemas/social/post.ts, Publish and PublishUnsigned). */
interface KeyedPublish {
  readonly postId: string
  readonly author: string
  readonly kind: string
  readonly body: string
  readonly tags: ReadonlyArray<string>
  readonly mediaCids: ReadonlyArray<string>
  readonly idempotencyKey?: string | undefined
}

/** The fingerprint of a publish: its kind, body, tags and media. */
export const publishFingerprint = (p: Omit<KeyedPublish, "postId" | "author">) =>
  fingerprintOf({ kind: p.kind, body: p.body, tags: [...p.tags], mediaCids: [...p.mediaCids] })

/**
 * A publish run by the Post entity under its Idempotency-Key: the key is claimed for this post
 * first (a redelivered or retried message finds its own claim), and released again when the
 * publish is refused before anything was written. A key naming another post (two first requests
 * raced, each with a fresh id) is refused `idempotency_key_claimed`, that post's id the message:
 * the route sends its request there instead. Nothing is written for a key that is not this post's.
 */
export const underKey = <A, E, R>(p: KeyedPublish, publish: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const key = p.idempotencyKey
    if (key === undefined) return yield* publish
    // A database failure here stays a SqlError: the entity makes it a defect and runs the publish
    // again (refuseOrRetry.ts). As a PostRefused "unavailable" it was kept as the Publish's reply,
    // and a retry under the key (whose claim had committed) was answered 503 for ever (chaos seed 8).
    const claim = yield* claimPostId(p.author, key, publishFingerprint(p), p.postId)
    if (claim._tag === "Mismatch") return yield* new PostRefused({ code: "idempotency_key_reused", message: "This Idempotency-Key was used for another request." })
    if (claim.postId !== p.postId) return yield* new PostRefused({ code: "idempotency_key_claimed", message: claim.postId })
    // A definite refusal (nothing written) frees the key; an unknown outcome keeps it: a retry names this post.
    return yield* Effect.tapError(publish, (e) =>
      e instanceof PostRefused && e.code !== "unavailable" ? Effect.ignore(releaseKey(p.author, key, p.postId)) : Effect.void)
  })

/** Releases a key whose post was never written (the first attempt was refused). */
export const releaseKey = (account: string, key: string, postId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`DELETE FROM social_post_idempotency WHERE account = ${account} AND key = ${key} AND post_id = ${postId}
      AND NOT EXISTS (SELECT 1 FROM social_posts WHERE id = ${postId})`)

/**
 * The request id of a post change (takedown, renewal, metadata, comment) sent with an
 * Idempotency-Key: a uuid derived from the account, the post, the action, the key and the
 * request's payload, so a retry of the same request is the same Change message (the cluster
 * answers a processed one with its stored reply, and the entity makes a redelivered one's stamp
 * only) and is never applied or charged twice. Another payload under the same key is another
 * request. Pure.
 */
export const changeRequestId = (scope: { readonly account: string; readonly postId: string; readonly action: string }, key: string, payload: CanonicalValue): string => {
  const h = sha256Hex(canonicalJson({ ...scope, key, payload }))
  // RFC 9562 layout (version 8: custom), so columns and keys typed as uuid take it.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`
}
