// Content ids: CIDv1, raw codec (0x55), sha2-256 (0x12), base32 lower ("bafkrei…", 59 chars).
// One profile only, so "same bytes → same CID" holds; a dag-pb or CIDv0 id for the same bytes
// is a different string and is refused by parseRawCid rather than silently compared.
import { createHash } from "node:crypto"
import { Data, Either } from "effect"
import { equals } from "multiformats/bytes"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import * as Digest from "multiformats/hashes/digest"
import { sha256 } from "multiformats/hashes/sha2"

export const CID_TEXT_LENGTH = 59
/** Longest text parseRawCid will look at; real ids in other bases stay well below it. */
const CID_INPUT_MAX = 128

// node:crypto instead of multiformats' sha256.digest: the latter is typed as awaitable, and a
// synchronous, total function is easier to use from pure code.
const digestOf = (bytes: Uint8Array) => Digest.create(sha256.code, createHash("sha256").update(bytes).digest())

/** CIDv1 raw sha2-256 of `bytes`, base32. Empty bytes → bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku. */
export const rawCid = (bytes: Uint8Array): string => CID.create(1, raw.code, digestOf(bytes)).toString()

/** Why a text is not a content id of our profile; `message` is for a person. */
export class CidInvalid extends Data.TaggedError("CidInvalid")<{ readonly message: string }> {}

const invalid = (message: string) => Either.left(new CidInvalid({ message }))

export interface ParsedCid {
  /** Canonical base32 text. */
  readonly cid: string
  /** The 32-byte sha2-256 digest. */
  readonly sha256: Uint8Array
}

/** Parses a CID and checks it is our profile (v1, raw, sha2-256); returns the canonical text. */
export const parseRawCid = (text: string): Either.Either<ParsedCid, CidInvalid> => {
  if (text.length === 0 || text.length > CID_INPUT_MAX) return invalid("not a content id")
  let cid: CID
  try {
    cid = CID.parse(text)
  } catch {
    return invalid("not a content id")
  }
  if (cid.version !== 1) return invalid("content id must be CIDv1")
  if (cid.code !== raw.code) return invalid(`content id codec 0x${cid.code.toString(16)} is not raw (0x55)`)
  if (cid.multihash.code !== sha256.code || cid.multihash.digest.length !== 32) {
    return invalid("content id hash is not sha2-256")
  }
  return Either.right({ cid: cid.toString(), sha256: cid.multihash.digest })
}

/** True when `cid` (any accepted text form) names exactly these bytes. */
export const cidMatches = (cid: string, bytes: Uint8Array): boolean => {
  const parsed = parseRawCid(cid)
  return Either.isRight(parsed) && equals(parsed.right.sha256, digestOf(bytes).digest)
}
