// Signed outbound callbacks (spec: Events): `x-svc-signature: sha256=<hex HMAC-SHA256 of
// timestamp + "." + raw body>` keyed with the key's signing secret, `x-svc-timestamp` in unix
// seconds. The receiver's side (`verifyCallback`) is here too: the tests use it, and it is the
// reference partners can copy (docs/desk.md).
import { hmacSha256Hex, verifyHmacSha256Hex } from "../../crypto/hmac.ts"

/** How old a callback's timestamp may be before a receiver refuses it ("a few minutes"). */
export const callbackMaxAgeSec = 300

export const signatureOf = (secret: string, timestampSec: number, rawBody: string): string =>
  `sha256=${hmacSha256Hex(secret, `${timestampSec}.${rawBody}`)}`

/** The three headers of one delivery. */
export const callbackHeaders = (secret: string, eventType: string, timestampSec: number, rawBody: string): Record<string, string> => ({
  "content-type": "application/json",
  "x-svc-timestamp": String(timestampSec),
  "x-svc-event": eventType,
  "x-svc-signature": signatureOf(secret, timestampSec, rawBody)
})

/** What a receiver checks: the signature in constant time, and a timestamp at most `maxAgeSec` old. */
export const verifyCallback = (
  secret: string,
  headers: { readonly timestamp: string | undefined; readonly signature: string | undefined },
  rawBody: string,
  nowSec: number,
  maxAgeSec = callbackMaxAgeSec
): "ok" | "bad-signature" | "stale" => {
  const ts = Number(headers.timestamp)
  if (!Number.isInteger(ts)) return "bad-signature"
  const sig = headers.signature ?? ""
  if (!sig.startsWith("sha256=") || !verifyHmacSha256Hex(secret, `${ts}.${rawBody}`, sig.slice(7))) return "bad-signature"
  return Math.abs(nowSec - ts) > maxAgeSec ? "stale" : "ok"
}
