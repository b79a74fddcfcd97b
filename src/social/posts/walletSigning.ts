// Handing a member-signed action's PSBTs to the member's wallet app (issue 24): the web app shows a
// QR and a deep link to a public URL carrying a signing code; the wallet GETs the PSBTs there and
// POSTs them back signed, with no session of its own. The code is the request id and an HMAC of it
// under a key derived from the master key: nothing is stored, a code is good for its request only
// (a post's publish request id is the post's public long id, so the id alone must not be enough),
// and it ends with the request. What the code gives is the PSBTs; what the POST needs besides is
// signatures that verify for the post address, which only the member's wallet can make. Pure.
import { constantTimeEqual, hmacSha256Hex } from "../../crypto/hmac.ts"
import { DEEP_LINK_SCHEME } from "../../platform/signin/challenge.ts"

/** Where a wallet reads the PSBTs (GET ?token=) and sends them signed (POST {token, psbts}). */
export const STAMP_SIGNING_PATH = "/api/public/v1/stamp-signing"
/** The master key's subkey label (SecretBox.subkey). */
export const STAMP_SIGNING_KEY_LABEL = "social stamp signing"
/** 128 bits of HMAC-SHA256, as hex. */
const MAC_HEX_LENGTH = 32
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const macOf = (key: Uint8Array, requestId: string) => hmacSha256Hex(key, `stamp-signing:${requestId}`).slice(0, MAC_HEX_LENGTH)

/** The signing code of request `requestId`: `<request id>.<mac>`. */
export const signingToken = (key: Uint8Array, requestId: string): string => `${requestId}.${macOf(key, requestId)}`

/** The request a signing code is for, or undefined when it is not one this service made. */
export const requestOfSigningToken = (key: Uint8Array, token: string): string | undefined => {
  const [requestId, mac, ...rest] = token.split(".")
  if (requestId === undefined || mac === undefined || rest.length > 0 || !UUID.test(requestId) || !/^[0-9a-f]+$/.test(mac)) return undefined
  return constantTimeEqual(mac, macOf(key, requestId)) ? requestId : undefined
}

/** The URL the QR holds, on the social listener `base`. */
export const signingUrl = (base: string, token: string) => `${base}${STAMP_SIGNING_PATH}?token=${token}`

/** For a wallet on the same device: the sign-in's scheme, `sign` as `link` is for wallet linking. */
export const signingDeepLink = (url: string) => `${DEEP_LINK_SCHEME}://sign?url=${encodeURIComponent(url)}`
