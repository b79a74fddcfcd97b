// SCRAM-SHA-256 (RFC 5802, RFC 7677), the server side, as Postgres speaks it: the multiplexer in
// front of PGlite asks every connection for the embedded database's password this way, so the
// PGlite engine is as private as the local-postgres one (docs/embedded-postgres.md, "Privacy").
// Pure apart from the random server nonce and salt. No channel binding (no TLS on loopback): a
// client asking for it is refused; "y" (it could, we did not offer it) is accepted.
// Modules, not the "effect" index: see pgWire.ts.
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto"
import * as Data from "effect/Data"
import * as Either from "effect/Either"

export const SCRAM_SHA_256 = "SCRAM-SHA-256"
/** Postgres's own default (scram_iterations). */
export const SCRAM_ITERATIONS = 4096
/** Random bytes of the server's half of the nonce, and of the salt. */
const NONCE_BYTES = 18
const SALT_BYTES = 16

/** What the server keeps instead of the password (as Postgres keeps it in pg_authid). */
export interface ScramVerifier {
  readonly salt: Buffer
  readonly iterations: number
  readonly storedKey: Buffer
  readonly serverKey: Buffer
}

/** The exchange could not go on; `code` is the SQLSTATE for the FATAL answer. */
export class ScramRefused extends Data.TaggedError("ScramRefused")<{
  readonly code: "08P01" | "28000" | "28P01"
  readonly message: string
}> {}

/** The state between the server-first and client-final messages. */
export interface ScramExchange {
  readonly gs2Header: string
  readonly nonce: string
  readonly clientFirstBare: string
  readonly serverFirst: string
}

const hmac = (key: Buffer, text: string): Buffer => createHmac("sha256", key).update(text, "utf8").digest()
const sha256 = (b: Buffer): Buffer => createHash("sha256").update(b).digest()

export const makeVerifier = (password: string, salt: Buffer = randomBytes(SALT_BYTES), iterations = SCRAM_ITERATIONS): ScramVerifier => {
  // Postgres runs the password through SASLprep first; a hex password is unchanged by it.
  const salted = pbkdf2Sync(Buffer.from(password, "utf8"), salt, iterations, 32, "sha256")
  return { salt, iterations, storedKey: sha256(hmac(salted, "Client Key")), serverKey: hmac(salted, "Server Key") }
}

const wrongPassword = new ScramRefused({ code: "28P01", message: "password authentication failed" })
const malformed = (what: string) => Either.left(new ScramRefused({ code: "08P01", message: `malformed SCRAM message: ${what}` }))

/** `a=1,b=2` → Map; undefined when an attribute is not `x=...`. */
const attributes = (text: string): Map<string, string> | undefined => {
  const out = new Map<string, string>()
  for (const part of text.split(",")) {
    if (part.length < 2 || part[1] !== "=") return undefined
    out.set(part[0]!, part.slice(2))
  }
  return out
}

/** A nonce is printable ASCII without a comma (RFC 5802, 7.). */
const validNonce = (n: string) => /^[\x21-\x2b\x2d-\x7e]+$/.test(n)

/**
 * The client-first message (`n,,n=user,r=cnonce`) → the server-first message and the exchange.
 * `serverNonce` is for tests (RFC 7677's example); a random one otherwise.
 */
export const serverFirst = (
  verifier: ScramVerifier,
  clientFirst: string,
  serverNonce: string = randomBytes(NONCE_BYTES).toString("base64")
): Either.Either<{ readonly message: string; readonly exchange: ScramExchange }, ScramRefused> => {
  const m = /^([nyp])(=[^,]*)?,([^,]*),(.*)$/.exec(clientFirst)
  if (m === null) return malformed("no GS2 header")
  if (m[1] === "p") {
    return Either.left(new ScramRefused({ code: "28000", message: "channel binding is not supported (no TLS on this connection)" }))
  }
  if (m[2] !== undefined) return malformed("channel binding flag")
  if (m[3] !== "") return Either.left(new ScramRefused({ code: "28000", message: "an authorization identity is not supported" }))
  const bare = m[4]!
  const attrs = attributes(bare)
  if (attrs === undefined) return malformed("client-first attributes")
  if (attrs.has("m")) return Either.left(new ScramRefused({ code: "28000", message: "SCRAM extensions are not supported" }))
  const clientNonce = attrs.get("r")
  if (!attrs.has("n") || clientNonce === undefined || !validNonce(clientNonce)) return malformed("client-first user or nonce")
  if (!validNonce(serverNonce)) return malformed("server nonce")
  const nonce = clientNonce + serverNonce
  const message = `r=${nonce},s=${verifier.salt.toString("base64")},i=${verifier.iterations}`
  return Either.right({ message, exchange: { gs2Header: `${m[1]},,`, nonce, clientFirstBare: bare, serverFirst: message } })
}

/**
 * The client-final message (`c=biws,r=nonce,p=proof`) → the server-final message (`v=signature`)
 * when the proof shows the password; 28P01 otherwise.
 */
export const serverFinal = (
  verifier: ScramVerifier,
  exchange: ScramExchange,
  clientFinal: string
): Either.Either<string, ScramRefused> => {
  const cut = clientFinal.lastIndexOf(",p=")
  if (cut < 0) return malformed("no proof")
  const withoutProof = clientFinal.slice(0, cut)
  const attrs = attributes(withoutProof)
  if (attrs === undefined) return malformed("client-final attributes")
  if (attrs.get("c") !== Buffer.from(exchange.gs2Header, "utf8").toString("base64")) return malformed("channel binding data")
  if (attrs.get("r") !== exchange.nonce) return malformed("nonce")
  const proof = Buffer.from(clientFinal.slice(cut + 3), "base64")
  const authMessage = `${exchange.clientFirstBare},${exchange.serverFirst},${withoutProof}`
  const signature = hmac(verifier.storedKey, authMessage)
  if (proof.length !== signature.length) return Either.left(wrongPassword)
  const clientKey = Buffer.alloc(proof.length)
  for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i]! ^ signature[i]!
  if (!timingSafeEqual(sha256(clientKey), verifier.storedKey)) return Either.left(wrongPassword)
  return Either.right(`v=${hmac(verifier.serverKey, authMessage).toString("base64")}`)
}
