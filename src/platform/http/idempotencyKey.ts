// The Idempotency-Key request header (IETF draft-ietf-httpapi-idempotency-key-header), as the
// social API (POST /api/social/posts, docs/social.md) and the desk (order creation,
// docs/desk-orders.md) take it: the header's parsing, a request's fingerprint and the keys'
// lifetime. Each service keeps its own claims, scoped to its own caller, in its own table.
import { Either } from "effect"
import { canonicalJson, type CanonicalValue } from "../../crypto/canonicalJson.ts"
import { sha256Hex } from "../../crypto/token.ts"

/** What a key may be once unquoted: 1 to 255 visible ASCII characters. */
const KEY = /^[\x21-\x7e]{1,255}$/

/**
 * The header's value. The draft defines it as a Structured Field String (RFC 8941: `"…"`, with
 * `\"` and `\\` escapes); a bare token (the form many clients send) is taken too. Undefined when
 * absent; Left with a reason when malformed.
 */
export const parseIdempotencyKey = (header: string | undefined): Either.Either<string | undefined, string> => {
  if (header === undefined) return Either.right(undefined)
  const raw = header.trim()
  let key = raw
  if (raw.startsWith("\"")) {
    if (raw.length < 2 || !raw.endsWith("\"")) return Either.left("an unterminated string")
    key = raw.slice(1, -1).replace(/\\(["\\])/g, "$1")
  }
  return KEY.test(key) ? Either.right(key) : Either.left("1 to 255 visible ASCII characters, as a Structured Field String")
}

/** The request's fingerprint: sha-256 of its canonical payload. */
export const fingerprintOf = (payload: CanonicalValue): string => sha256Hex(canonicalJson(payload))

/**
 * How long a key names what its first request made (the draft leaves the expiry to the server;
 * Stripe's is 24 hours): a retry is an immediate thing, and keys kept forever would grow without
 * bound. An expired key is free again.
 */
export const idempotencyKeyHours = 24
