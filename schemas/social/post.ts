// Messages of the Post entity, one per post (entity id: the post's long id, a uuid). It owns the
// post's hosting (paid period, grace, unpin) on its own durable timers and its lifecycle stamps
// (docs/social.md). Persisted: a publish, takedown or renewal is acknowledged after its commit.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"
import { FinishStamps } from "./stamping.ts"

export const PostKind = Schema.Literal("story", "photo", "video", "text")
/** awaiting_signature / unsigned: member-signed posts only (docs/social.md, "Member-signed stamps"). */
export const PostState = Schema.Literal("hosted", "grace", "unpinned", "taken_down", "moderated", "awaiting_signature", "unsigned")
export type PostState = typeof PostState.Type

export class PostRefused extends Schema.TaggedError<PostRefused>()("PostRefused", {
  code: Schema.String,
  message: Schema.String
}) {}

/**
 * "done": every stamp the post needs is on the ledger; "pending": the post is written and charged,
 * and its Post entity keeps sending its stamps on its own timer until they are; "awaiting_signature":
 * an account linked by xpub only, the stamps wait for the member's signatures (docs/social.md).
 */
export const StampingState = Schema.Literal("done", "pending", "awaiting_signature")

/** One stamp built for the member to sign (member-signed stamps). */
export const UnsignedStampView = Schema.Struct({
  tag: Schema.String,
  cid: Schema.String,
  opReturn: Schema.String,
  address: Schema.String.annotations({ description: "The post's own address, derived from the account xpub: the input's owner" }),
  derivationPath: Schema.String.annotations({ description: "Full path of the key that signs, e.g. m/44'/696969'/1101'/3/0/0" }),
  psbt: Schema.String.annotations({ description: "BIP-174 PSBT, base64: one P2PKH input (nonWitnessUtxo, bip32Derivation with the account key's fingerprint and the path below it), OP_RETURN then change to the same address" })
})

export const PostReceipt = Schema.Struct({
  postId: Schema.String.annotations({ description: "Long id (uuid), valid forever" }),
  shortId: Schema.String.annotations({ description: "6 characters of the post's own derived address" }),
  metadataCid: Schema.String,
  mediaCids: Schema.Array(Schema.String),
  txHash: Schema.NullOr(Schema.String).annotations({ description: "The CHV1P stamp's txid; null while stamping is pending" }),
  opReturn: Schema.NullOr(Schema.String),
  stamping: StampingState,
  // Member-signed publish (stamping "awaiting_signature") only: what UnsignedStamps carries.
  state: Schema.optional(PostState),
  action: Schema.optional(Schema.Literal("publish")),
  requestId: Schema.optional(Schema.String),
  expiresAt: Schema.optional(Schema.String.annotations({ description: "ISO 8601: after this the publish lapses (SHARDLINE_SOCIAL_SIGNATURE_WINDOW_MS)" })),
  signaturesUrl: Schema.optional(Schema.String),
  stamps: Schema.optional(Schema.Array(UnsignedStampView))
})
export type PostReceipt = typeof PostReceipt.Type

export const PostStateReply = Schema.Struct({
  postId: Schema.String,
  state: PostState,
  paidUntil: Schema.String.annotations({ description: "ISO 8601: end of the paid hosting period" }),
  txid: Schema.NullOr(Schema.String).annotations({ description: "The tag's transaction (T, D or R)" }),
  opReturn: Schema.NullOr(Schema.String),
  blockedCids: Schema.optional(Schema.Array(Schema.String).annotations({
    description: "A moderator's pull only: the CIDs it blocks (the post's manifests and media), served under no post until lifted"
  }))
})
export type PostStateReply = typeof PostStateReply.Type

/** What a publish carries, whoever signs its stamps (Publish: the service; PublishUnsigned: the member). */
const publishFields = {
  postId: Schema.String,
  author: Schema.String,
  kind: PostKind,
  body: Schema.String,
  tags: Schema.Array(Schema.String),
  mediaCids: Schema.Array(Schema.String),
  /**
   * The request's Idempotency-Key, when it had one: the entity claims it for this post (account,
   * key, the fields' fingerprint) before it writes anything; a key already naming another post is
   * refused `idempotency_key_claimed` (that post's id as the message), another payload under it
   * `idempotency_key_reused`.
   */
  idempotencyKey: Schema.optional(Schema.String)
}

export class Publish extends Schema.Class<Publish>("Post/Publish")(publishFields) {
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

// Member-signed stamps (accounts linked by xpub only; docs/social.md, "Member-signed stamps"): the
// entity builds an action's stamps unsigned, the member signs them in their wallet and sends them back.

export const UnsignedStamps = Schema.Struct({
  postId: Schema.String,
  shortId: Schema.String,
  state: PostState,
  action: Schema.Literal("publish", "takedown", "renew", "metadata", "comment"),
  requestId: Schema.String,
  metadataCid: Schema.String,
  expiresAt: Schema.String.annotations({ description: "ISO 8601: after this the action lapses (SHARDLINE_SOCIAL_SIGNATURE_WINDOW_MS)" }),
  signaturesUrl: Schema.String,
  stamps: Schema.Array(UnsignedStampView)
})
export type UnsignedStamps = typeof UnsignedStamps.Type

export const SignedStamps = Schema.Struct({
  postId: Schema.String,
  shortId: Schema.String,
  state: PostState,
  action: Schema.Literal("publish", "takedown", "renew", "metadata", "comment"),
  metadataCid: Schema.String,
  txHash: Schema.NullOr(Schema.String).annotations({ description: "The CHV1P stamp's txid (publish), else the action's stamp" }),
  stamps: Schema.Array(Schema.Struct({ tag: Schema.String, cid: Schema.String, txid: Schema.String, opReturn: Schema.String })),
  stamping: StampingState.annotations({ description: "\"pending\": recorded and in effect, not all on the ledger yet; the Post entity sends them again on its own timer" })
})
export type SignedStamps = typeof SignedStamps.Type

/** A publish by a member-signed account: rows as for Publish, stamps built for the member to sign. */
export class PublishUnsigned extends Schema.Class<PublishUnsigned>("Post/PublishUnsigned")(publishFields) {
  [PrimaryKey.symbol]() {
    return `publish-unsigned:${this.postId}`
  }
}

/** Takedown (T), renewal (R) or metadata (M) of a member-signed post: its stamp built for the member to sign. */
export class ChangeUnsigned extends Schema.Class<ChangeUnsigned>("Post/ChangeUnsigned")({
  postId: Schema.String,
  action: Schema.Literal("takedown", "renew", "metadata"),
  body: Schema.optional(Schema.String),
  tags: Schema.optional(Schema.Array(Schema.String)),
  requestId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `change-unsigned:${this.postId}:${this.requestId}`
  }
}

/**
 * The member's signed stamps (raw hex or PSBT base64 each); checked, recorded, then broadcast.
 * `requestId`: a member-signed comment's (its comment id); without it, the author's waiting action.
 */
export class SubmitSignatures extends Schema.Class<SubmitSignatures>("Post/SubmitSignatures")({
  postId: Schema.String,
  items: Schema.Array(Schema.String),
  submissionId: Schema.String,
  requestId: Schema.optional(Schema.String)
}) {
  [PrimaryKey.symbol]() {
    return `signatures:${this.postId}:${this.submissionId}`
  }
}

/** A comment (X) by an xpub-only commenter: charged, its stamp built for the commenter to sign. */
export class CommentUnsigned extends Schema.Class<CommentUnsigned>("Post/CommentUnsigned")({
  postId: Schema.String,
  author: Schema.String,
  body: Schema.String,
  requestId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `comment-unsigned:${this.postId}:${this.requestId}`
  }
}

/** An operator lifts this post's moderation block of one CID (`social moderate --lift CID`); the post stays pulled. */
export class LiftBlock extends Schema.Class<LiftBlock>("Post/LiftBlock")({
  postId: Schema.String,
  cid: Schema.String,
  reason: Schema.optional(Schema.String),
  requestId: Schema.String
}) {
  [PrimaryKey.symbol]() {
    return `lift-block:${this.postId}:${this.cid}:${this.requestId}`
  }
}

export const BlockLifted = Schema.Struct({
  postId: Schema.String,
  cid: Schema.String,
  liftedAt: Schema.NullOr(Schema.String).annotations({ description: "ISO 8601: when this post's block of the CID ended; null if it held none" })
})
export type BlockLifted = typeof BlockLifted.Type

/** The end of a signature window: an action still unsigned lapses. */
export class SignatureDeadline extends Schema.Class<SignatureDeadline>("Post/SignatureDeadline")({
  postId: Schema.String,
  requestId: Schema.String,
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `signature-deadline:${this.requestId}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

// The requests a member or operator makes (Publish, Change, the member-signed ones, LiftBlock) are
// uninterruptible: a caller that stops waiting (an HTTP client that timed out and will ask again
// with the same Idempotency-Key) must not cut the entity's work in half. Interrupted, a persisted
// request is stored as answered "interrupted": the effect it had committed (a comment and its
// owed stamps, say) stays, the rest (making the stamps, or scheduling their timer) never runs, and
// every retry of the same request is answered from that stored interrupt (chaos seed 1, issue 25).
export const Post = Entity.make("Post", [
  Rpc.make("Publish", { payload: Publish, success: PostReceipt, error: PostRefused }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("Change", { payload: Change, success: PostStateReply, error: PostRefused }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("HostingCheck", { payload: HostingCheck }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("FinishStamps", { payload: FinishStamps }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("PublishUnsigned", { payload: PublishUnsigned, success: UnsignedStamps, error: PostRefused }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("ChangeUnsigned", { payload: ChangeUnsigned, success: UnsignedStamps, error: PostRefused }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("SubmitSignatures", { payload: SubmitSignatures, success: SignedStamps, error: PostRefused }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("CommentUnsigned", { payload: CommentUnsigned, success: UnsignedStamps, error: PostRefused }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true),
  Rpc.make("SignatureDeadline", { payload: SignatureDeadline }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("LiftBlock", { payload: LiftBlock, success: BlockLifted, error: PostRefused }).annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, true)
])
