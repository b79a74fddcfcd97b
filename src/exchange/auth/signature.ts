// Pure checks of a signed exchange request (spec: Authentication). No I/O: the caller supplies
// the raw query, the raw body, the key's secret and the clock. The HMAC covers the bytes as
// received: the query without `signature`, followed directly by the body.
import { hmacSha256Hex, verifyHmacSha256Hex } from "../../crypto/hmac.ts"
import { messages, type ApiErrorCode } from "../../../schemas/exchange/errors.ts"

export const recvWindowDefaultMs = 5000
export const recvWindowMaxMs = 60000
/** A timestamp may lead the server clock by less than this (Binance's rule). */
export const clockLeadMaxMs = 1000

export interface Refusal {
  readonly code: ApiErrorCode
  readonly msg: string
}

export interface ParsedParams {
  /** Every parameter except signature; a name in both query and body takes the query's value. */
  readonly params: ReadonlyMap<string, string>
  readonly signature: string | undefined
  /** The exact bytes the client signed. */
  readonly payload: string
}

const decode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

interface Split {
  readonly pairs: ReadonlyArray<readonly [string, string | undefined]>
  /** Raw text with the signature pair removed, or the text itself if it has none. */
  readonly unsigned: string
  readonly signature: string | undefined
  readonly signatureLast: boolean
}

const split = (raw: string): Split => {
  if (raw === "") return { pairs: [], unsigned: "", signature: undefined, signatureLast: true }
  const parts = raw.split("&")
  const pairs: Array<readonly [string, string | undefined]> = []
  let signature: string | undefined
  let sigIndex = -1
  parts.forEach((part, i) => {
    const eq = part.indexOf("=")
    const name = decode(eq < 0 ? part : part.slice(0, eq)) ?? part
    const value = eq < 0 ? "" : decode(part.slice(eq + 1))
    if (name === "signature") {
      signature = value ?? ""
      sigIndex = i
    } else pairs.push([name, value])
  })
  const unsigned = sigIndex < 0 ? raw : parts.filter((_, i) => i !== sigIndex).join("&")
  return { pairs, unsigned, signature, signatureLast: sigIndex < 0 || sigIndex === parts.length - 1 }
}

/**
 * Parses the query and (form) body. The signature must be the last parameter of whichever part
 * carries it; the signed payload is the rest, query first, then body, with no separator.
 */
export const parseParams = (rawQuery: string, rawBody: string, bodyIsForm: boolean): ParsedParams | Refusal => {
  const q = split(rawQuery)
  const b = bodyIsForm ? split(rawBody) : { pairs: [], unsigned: rawBody, signature: undefined, signatureLast: true }
  if (q.signature !== undefined && b.signature !== undefined) {
    return { code: -1101, msg: "Duplicate values for parameter 'signature'." }
  }
  if (!q.signatureLast || !b.signatureLast) {
    return { code: -1022, msg: messages.signature }
  }
  const params = new Map<string, string>()
  for (const [name, value] of [...b.pairs, ...q.pairs]) {
    if (value === undefined) return { code: -1100, msg: messages.illegal(name, "valid percent-encoding") }
    params.set(name, value) // query pairs come last, so the query wins
  }
  const signature = q.signature ?? b.signature
  // When the signature is in the body, the query comes first and the body (without it) after.
  const payload = q.signature !== undefined ? q.unsigned + rawBody : rawQuery + b.unsigned
  return { params, signature, payload }
}

export const isRefusal = (x: unknown): x is Refusal =>
  typeof x === "object" && x !== null && "code" in x && "msg" in x

const digits = /^[0-9]{1,20}$/

/** Validates timestamp and recvWindow against the server clock. */
export const checkTiming = (params: ReadonlyMap<string, string>, nowMs: number): Refusal | undefined => {
  const ts = params.get("timestamp")
  if (ts === undefined || ts === "") return { code: -1102, msg: messages.missing("timestamp") }
  if (!digits.test(ts)) return { code: -1100, msg: messages.illegal("timestamp", "^[0-9]{1,20}$") }
  const rw = params.get("recvWindow")
  let window = recvWindowDefaultMs
  if (rw !== undefined) {
    if (rw === "") return { code: -1102, msg: messages.missing("recvWindow") }
    if (!digits.test(rw)) return { code: -1100, msg: messages.illegal("recvWindow", "^[0-9]{1,20}$") }
    window = Number(rw)
    if (window > recvWindowMaxMs) return { code: -1131, msg: messages.recvWindowMax }
  }
  // Binance accepts microsecond timestamps too; 1e14 ms is the year 5138, so the cut is safe.
  let t = Number(ts)
  if (t >= 1e14) t = Math.floor(t / 1000)
  if (t >= nowMs + clockLeadMaxMs) return { code: -1021, msg: messages.ahead }
  if (nowMs - t > window) return { code: -1021, msg: messages.recvWindow }
  return undefined
}

/** Constant-time check of the HMAC; a malformed signature is simply not valid. */
export const checkSignature = (secret: string, payload: string, signature: string | undefined): Refusal | undefined => {
  if (signature === undefined || signature === "") return { code: -1102, msg: messages.missing("signature") }
  return verifyHmacSha256Hex(secret, payload, signature) ? undefined : { code: -1022, msg: messages.signature }
}

export const sign = (secret: string, payload: string): string => hmacSha256Hex(secret, payload)
