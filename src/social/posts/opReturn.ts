// The OP_RETURN text of every social lifecycle event (spec: "OP_RETURN event tags"):
// `<tag>|<cid>|<suffix>`, ASCII, at most 80 bytes. Pure: encode (asserting the size), decode.
//
// The suffix (the spec leaves it "not shown"; docs/social.md, "Tags and suffixes") is
// `<author asset id>.<n>`: the author's 6-character #asset id, so a reader of the chain alone
// knows whose event it is, and n, the stamp's sequence number on its address in base 36
// (0 for the first), so a reader sees the order of a post's events and any gap in it.
import { Either } from "effect"
import { CID_TEXT_LENGTH, parseRawCid } from "../../crypto/cid.ts"

/** The spec's tags ("OP_RETURN event tags"). */
export const specTags = ["C", "P", "R", "T", "D", "M", "X", "CHV1G", "CHV1N", "CHV1P"] as const
/**
 * Tags of our own (beyond the spec; docs/social.md, "Tags and suffixes"): XM carries a comment's
 * manifest (its link to the commented post), stamped right after the comment's X (which carries
 * the comment body, as the spec reads X). A reader by the spec's rules skips a tag it does not know.
 */
export const ownTags = ["XM"] as const
export const stampTags = [...specTags, ...ownTags] as const
export type StampTag = typeof stampTags[number]

/** What each tag says (spec table). CHV1P: the post itself, the stamp its lookup proof shows. */
export const tagMeaning: Record<StampTag, string> = {
  C: "claim: content first lands on the network (each media item; the body of a post without media)",
  P: "payment: hosting payment received",
  R: "renewal: hosting prepaid for another period",
  T: "takedown: the author unpinned it",
  D: "moderation: a moderator pulled it",
  M: "metadata: profile or post metadata update",
  X: "comment: the service CID of a new comment body",
  XM: "comment manifest: links the comment's X to the commented post (beyond the spec)",
  CHV1G: "recovery countdown started (account continuity)",
  CHV1N: "succession completed to a new identity address",
  CHV1P: "post: the manifest of a new post (its lookup proof)"
}

export const opReturnBytesMax = 80
const ASSET_ID = /^[A-Z0-9]{6}$/
const SEQ = /^[0-9a-z]{1,7}$/

export interface StampText {
  readonly tag: StampTag
  readonly cid: string
  readonly assetId: string
  readonly seq: number
}

export const suffixOf = (assetId: string, seq: number): string => `${assetId}.${seq.toString(36)}`

/** The OP_RETURN text; a tag that would not fit in 80 bytes is a bug, so it throws (asserted). */
export const encodeStamp = (s: StampText): string => {
  const text = `${s.tag}|${s.cid}|${suffixOf(s.assetId, s.seq)}`
  const size = Buffer.byteLength(text, "utf8")
  if (size > opReturnBytesMax || !ASSET_ID.test(s.assetId) || !Number.isInteger(s.seq) || s.seq < 0 || s.cid.length !== CID_TEXT_LENGTH) {
    throw new Error(`invariant: OP_RETURN "${text}" is ${size} bytes or malformed (limit ${opReturnBytesMax})`)
  }
  return text
}

/** Reads an OP_RETURN payload back; Left(reason) for anything that is not one of our stamps. */
export const decodeStamp = (data: Uint8Array): Either.Either<StampText, string> => {
  if (data.length > opReturnBytesMax) return Either.left("longer than 80 bytes")
  const text = Buffer.from(data).toString("latin1")
  const parts = text.split("|")
  if (parts.length !== 3) return Either.left("not <tag>|<cid>|<suffix>")
  const [tag, cid, suffix] = parts as [string, string, string]
  if (!(stampTags as ReadonlyArray<string>).includes(tag)) return Either.left(`unknown tag ${tag.slice(0, 8)}`)
  if (Either.isLeft(parseRawCid(cid))) return Either.left("not a CID")
  const [assetId, seq, ...more] = suffix.split(".")
  if (more.length > 0 || assetId === undefined || seq === undefined || !ASSET_ID.test(assetId) || !SEQ.test(seq)) return Either.left("bad suffix")
  return Either.right({ tag: tag as StampTag, cid, assetId, seq: parseInt(seq, 36) })
}
