// Messages of the Post entity, one per post (entity id: the post's long id, a uuid). It owns the
// post's hosting (paid period, grace, unpin) on its own durable timers and its lifecycle stamps
// (docs/social.md). Persisted: a publish, takedown or renewal is acknowledged after its commit.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"
import { FinishStamps } from "./stamping.ts"

export const PostKind = Schema.Literal("story", "photo", "video", "text")
export const PostState = Schema.Literal("hosted", "grace", "unpinned", "taken_down", "moderated")
export type PostState = typeof PostState.Type

export class PostRefused extends Schema.TaggedError<PostRefused>()("PostRefused", {
  code: Schema.String,
  message: Schema.String
}) {}

/**
 * "done": every stamp the post needs is on the ledger; "pending": the post is written and charged,
 * and its Post entity keeps sending its stamps on its own timer until they are (docs/social.md).
 */
export const StampingState = Schema.Literal("done", "pending")

export const PostReceipt = Schema.Struct({
  postId: Schema.String.annotations({ description: "Long id (uuid), valid forever" }),
  shortId: Schema.String.annotations({ description: "6 characters of the post's own derived address" }),
  metadataCid: Schema.String,
  mediaCids: Schema.Array(Schema.String),
  txHash: Schema.NullOr(Schema.String).annotations({ description: "The CHV1P stamp's txid; null while stamping is pending" }),
  opReturn: Schema.NullOr(Schema.String),
  stamping: StampingState
})
export type PostReceipt = typeof PostReceipt.Type

export const PostStateReply = Schema.Struct({
  postId: Schema.String,
  state: PostState,
  paidUntil: Schema.String.annotations({ description: "ISO 8601: end of the paid hosting period" }),
  txid: Schema.NullOr(Schema.String).annotations({ description: "The tag's transaction (T, D or R)" }),
  opReturn: Schema.NullOr(Schema.String)
})
export type PostStateReply = typeof PostStateReply.Type

export class Publish extends Schema.Class<Publish>("Post/Publish")({
  postId: Schema.String,
  author: Schema.String,
  kind: PostKind,
  body: Schema.String,
  tags: Schema.Array(Schema.String),
  mediaCids: Schema.Array(Schema.String)
}) {
  [PrimaryKey.symbol]() {
    return `publish:${this.postId}`
  }
}

/**
 * Author takedown (T), moderator pull (D), renewal (R), metadata update (M: a new body or tags) or
 * a comment (X: `author` comments `body`); `requestId` makes a retry the same request.
 */
export class Change extends Schema.Class<Change>("Post/Change")({
  postId: Schema.String,
  action: Schema.Literal("takedown", "moderate", "renew", "metadata", "comment"),
  reason: Schema.optional(Schema.String),
  body: Schema.optional(Schema.String),
  tags: Schema.optional(Schema.Array(Schema.String)),
  author: Schema.optional(Schema.String),
  requestId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `change:${this.postId}:${this.requestId}`
  }
}

/** The post's own hosting timer; `n` makes each schedule's key unique, a stale one is ignored. */
export class HostingCheck extends Schema.Class<HostingCheck>("Post/HostingCheck")({
  postId: Schema.String,
  n: Schema.Number,
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `hosting:${this.postId}:${this.n}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

export const Post = Entity.make("Post", [
  Rpc.make("Publish", { payload: Publish, success: PostReceipt, error: PostRefused }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Change", { payload: Change, success: PostStateReply, error: PostRefused }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("HostingCheck", { payload: HostingCheck }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("FinishStamps", { payload: FinishStamps }).annotate(ClusterSchema.Persisted, true)
])
