// Cross-site writes on cookie sessions (issue 27.2). A cookie rides along with any request the
// browser makes to this host, including from a page on another port or a sibling subdomain
// (SameSite treats those as the same site), so a state change on a cookie session is taken only
// when the browser itself says it comes from this origin (Sec-Fetch-Site, else Origin against the
// Host it was sent to) and its body is not one a plain HTML form can send (text/plain, urlencoded,
// multipart: those need no CORS preflight); or when it carries the session's CSRF token. Pure.
import { timingSafeEqual } from "node:crypto"
import { sha256Hex } from "../../crypto/token.ts"

export const csrfHeader = "x-csrf-token"

/** The session's CSRF token: derived from its (secret) token hash, so nothing more is stored. */
export const csrfTokenOf = (tokenHash: string): string => sha256Hex(`csrf:${tokenHash}`)

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])
/** Bodies a cross-site form or a no-cors fetch can send without a preflight. */
const formTypes = /^\s*(text\/plain|application\/x-www-form-urlencoded|multipart\/form-data)\b/i

export interface CsrfInput {
  readonly method: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly tokenHash: string
  /** Multipart bodies are accepted on upload routes (still same-origin only). */
  readonly allowMultipart?: boolean
}

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

const sameOrigin = (headers: CsrfInput["headers"]): boolean => {
  const site = headers["sec-fetch-site"]
  if (site !== undefined) return site === "same-origin"
  const origin = headers["origin"]
  const host = headers["host"]
  if (origin === undefined || host === undefined) return false
  try {
    return new URL(origin).host === host.toLowerCase()
  } catch {
    return false
  }
}

/**
 * Why a sign-in step that ends in a session cookie (wallet-exchange) is refused as another site's
 * doing, or undefined. Login CSRF: a page elsewhere (another port of this host is another origin
 * but the same site) posts the attacker's own one-time token from the victim's browser, which would
 * then act as the attacker's account. A browser says where a request comes from (Sec-Fetch-Site,
 * else Origin); a program sends neither and a JSON body, and passes. A form or text/plain body, the
 * kinds a cross-site page can send without a preflight, is refused from anyone.
 */
export const signInCrossSiteRefusal = (headers: CsrfInput["headers"]): string | undefined => {
  const fromBrowser = headers["sec-fetch-site"] !== undefined || headers["origin"] !== undefined
  if (fromBrowser && !sameOrigin(headers)) {
    return "A sign-in is completed only by this site's own pages (Origin or Sec-Fetch-Site names another site)."
  }
  if (formTypes.test(headers["content-type"] ?? "")) {
    return "The one-time token is sent as JSON (Content-Type: application/json), not as a form or text/plain body."
  }
  return undefined
}

/** Why a cookie-session request is refused as possibly cross-site, or undefined to let it through. */
export const csrfRefusal = (input: CsrfInput): string | undefined => {
  if (safeMethods.has(input.method.toUpperCase())) return undefined
  const token = input.headers[csrfHeader]
  if (token !== undefined && token !== "" && same(token, csrfTokenOf(input.tokenHash))) return undefined
  if (!sameOrigin(input.headers)) {
    return "This change on a browser session must come from this site's own pages (Origin or Sec-Fetch-Site), or carry the session's X-CSRF-Token."
  }
  const type = input.headers["content-type"] ?? ""
  if (formTypes.test(type) && !(input.allowMultipart === true && /^\s*multipart\/form-data\b/i.test(type))) {
    return "A change on a browser session takes a JSON body (Content-Type: application/json), not a form or text/plain body."
  }
  return undefined
}
