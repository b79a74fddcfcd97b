// Pure checks of a signed exchange request (spec: Authentication). No I/O: the caller supplies
// the raw query, the raw body, the key's secret and the clock. The HMAC covers the bytes as
// received: the query without `signature`, followed directly by the body.
import { hmacSha256Hex, verifyHmacSha256Hex } from "../../crypto/hmac.ts"
import { Data, Either } from "effect"
import { messages, type ApiErrorCode } from "../../../schemas/exchange/errors.ts"

export const recvWindowDefaultMs = 5000
export const recvWindowMaxMs = 60000
/** A timestamp may lead the server clock by less than this (Binance's rule). */
export const clockLeadMaxMs = 1000

/** Why a signed request was refused, as the exchange's code and message. */
export class SignedRefusal extends Data.TaggedError("SignedRefusal")<{
  readonly code: ApiErrorCode
  readonly msg: string
}> {}

export interface ParsedParams {
  /** Every parameter except signature, from the query and the body (read apart). */
  readonly params: ReadonlyMap<string, string>
  readonly signature: string | undefined
  /** The exact bytes the client signed. */
  readonly payload: string
}

const decode = (s: string): string | undefined => {
  // Most values (numbers, symbols, ids) have nothing to decode: no copy for them (every signed
  // request reads about ten parameters).
  if (s.indexOf("%") < 0 && s.indexOf("+") < 0) return s
  try {
    return decodeURIComponent(s.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

interface Signed {
  /** Raw text with the signature pair removed, or the text itself if it has none. */
  readonly unsigned: string
  readonly signature: string | undefined
  readonly signatureLast: boolean
}

/** Finds the signature pair in one part (query or body) without reading anything else. */
const withoutSignature = (raw: string): Signed => {
  if (raw === "") return { unsigned: "", signature: undefined, signatureLast: true }
  const parts = raw.split("&")
  const at = parts.findIndex((part) => part === "signature" || part.startsWith("signature="))
  if (at < 0) return { unsigned: raw, signature: undefined, signatureLast: true }
  const part = parts[at]!
  return {
    unsigned: parts.filter((_, i) => i !== at).join("&"),
    signature: part.includes("=") ? decode(part.slice("signature=".length)) ?? "" : "",
    signatureLast: at === parts.length - 1 && parts.slice(at + 1).every((p) => !p.startsWith("signature"))
  }
}

/** Pure: the parameters of one string; a name given twice is refused (-1101). */
export const readParams = (text: string): Either.Either<ReadonlyMap<string, string>, SignedRefusal> => {
  const params = new Map<string, string>()
  for (const part of text.split("&")) {
    if (part === "") continue
    const eq = part.indexOf("=")
    const rawName = eq < 0 ? part : part.slice(0, eq)
    const name = decode(rawName)
    const value = eq < 0 ? "" : decode(part.slice(eq + 1))
    const shown = (name ?? rawName).slice(0, 40)
    if (name === undefined || value === undefined) {
      return Either.left(new SignedRefusal({ code: -1100, msg: messages.illegal(shown, "valid percent-encoding") }))
    }
    if (params.has(name)) return Either.left(new SignedRefusal({ code: -1101, msg: `Duplicate values for parameter '${shown}'.` }))
    params.set(name, value)
  }
  return Either.right(params)
}

/** Pure: the parameters of the query and of the body, read apart; a name in both is refused (-1101). */
const readBoth = (query: string, body: string): Either.Either<ReadonlyMap<string, string>, SignedRefusal> =>
  Either.flatMap(readParams(query), (fromQuery) =>
    Either.flatMap(readParams(body), (fromBody) => {
      const params = new Map(fromQuery)
      for (const [name, value] of fromBody) {
        if (params.has(name)) return Either.left(new SignedRefusal({ code: -1101, msg: `Duplicate values for parameter '${name.slice(0, 40)}'.` }))
        params.set(name, value)
      }
      return Either.right(params)
    }))

/** A whole `name=value` pair: one '=', something on each side. */
const wholePair = (part: string): boolean => {
  const eq = part.indexOf("=")
  return eq > 0 && eq < part.length - 1 && part.indexOf("=", eq + 1) < 0
}

/**
 * Parses a signed request. The signature is the last parameter of whichever part carries it (query
 * or body, not both); the signed payload is the rest, query first, then body, with no separator
 * (Binance's `totalParams`: its "mixed" example signs `…timeInForce=GTCquantity=1…`). The query and
 * the body are then read apart, as Binance reads them.
 *
 * Because the payload has no separator, a captured request could be re-cut at another query/body
 * boundary and still verify. A cut inside a pair leaves a broken pair on one side of the boundary
 * (`price=1` + `0&…`, `pri` + `ce=10`, `price=` + `10&…`), so where the two parts do not meet at a
 * '&' the query's last pair and the body's first pair must each be a whole `name=value` with one
 * '=' (-1102 otherwise): a re-cut can then only fall between pairs, where the values read are the
 * signed ones. (A value with a raw '=' in it is the one cut this cannot see; clients encode it.)
 */
export const parseSigned = (rawQuery: string, rawBody: string): Either.Either<ParsedParams, SignedRefusal> => {
  const q = withoutSignature(rawQuery)
  const b = withoutSignature(rawBody)
  if (q.signature !== undefined && b.signature !== undefined) {
    return Either.left(new SignedRefusal({ code: -1101, msg: "Duplicate values for parameter 'signature'." }))
  }
  if (!q.signatureLast || !b.signatureLast) return Either.left(new SignedRefusal({ code: -1022, msg: messages.signature }))
  if (q.unsigned !== "" && b.unsigned !== "" && !q.unsigned.endsWith("&") && !b.unsigned.startsWith("&")) {
    const lastOfQuery = q.unsigned.slice(q.unsigned.lastIndexOf("&") + 1)
    const amp = b.unsigned.indexOf("&")
    const firstOfBody = amp < 0 ? b.unsigned : b.unsigned.slice(0, amp)
    if (!wholePair(lastOfQuery) || !wholePair(firstOfBody)) {
      return Either.left(new SignedRefusal({
        code: -1102,
        msg: "The query's last parameter and the body's first must each be a whole name=value pair."
      }))
    }
  }
  const payload = q.unsigned + b.unsigned
  return Either.map(readBoth(q.unsigned, b.unsigned), (params) => ({ params, signature: q.signature ?? b.signature, payload }))
}

const digits = /^[0-9]{1,20}$/

/** Validates timestamp and recvWindow against the server clock. */
export const checkTiming = (params: ReadonlyMap<string, string>, nowMs: number): SignedRefusal | undefined => {
  const ts = params.get("timestamp")
  if (ts === undefined || ts === "") return new SignedRefusal({ code: -1102, msg: messages.missing("timestamp") })
  if (!digits.test(ts)) return new SignedRefusal({ code: -1100, msg: messages.illegal("timestamp", "^[0-9]{1,20}$") })
  const rw = params.get("recvWindow")
  let window = recvWindowDefaultMs
  if (rw !== undefined) {
    if (rw === "") return new SignedRefusal({ code: -1102, msg: messages.missing("recvWindow") })
    if (!digits.test(rw)) return new SignedRefusal({ code: -1100, msg: messages.illegal("recvWindow", "^[0-9]{1,20}$") })
    window = Number(rw)
    if (window > recvWindowMaxMs) return new SignedRefusal({ code: -1131, msg: messages.recvWindowMax })
  }
  // Binance accepts microsecond timestamps too; 1e14 ms is the year 5138, so the cut is safe.
  let t = Number(ts)
  if (t >= 1e14) t = Math.floor(t / 1000)
  if (t >= nowMs + clockLeadMaxMs) return new SignedRefusal({ code: -1021, msg: messages.ahead })
  if (nowMs - t > window) return new SignedRefusal({ code: -1021, msg: messages.recvWindow })
  return undefined
}

/** Constant-time check of the HMAC; a malformed signature is simply not valid. */
export const checkSignature = (secret: string, payload: string, signature: string | undefined): SignedRefusal | undefined => {
  if (signature === undefined || signature === "") return new SignedRefusal({ code: -1102, msg: messages.missing("signature") })
  return verifyHmacSha256Hex(secret, payload, signature) ? undefined : new SignedRefusal({ code: -1022, msg: messages.signature })
}

export const sign = (secret: string, payload: string): string => hmacSha256Hex(secret, payload)
