// Who may read /ops and /metrics. They show runner addresses, shard owners and traffic, so a node
// reachable from outside should require SHARDLINE_OPS_TOKEN as a bearer token (Prometheus sends
// one with `authorization: {credentials: …}`). Unset, they stay open: the embedded default binds
// to 127.0.0.1, and a local operator needs no ceremony.
// A browser cannot send a bearer token when a person opens /ops, so the page also takes a cookie:
// `GET /ops?token=<token>` once (OpsRoutes.ts) sets it, HttpOnly, SameSite=Strict, for /ops only
// (so never for /metrics). The cookie is not the token but a MAC of a fixed label under it: a
// leaked cookie opens the page, not /metrics, and changing the token ends every cookie.
import { createHmac } from "node:crypto"
import { constantTimeEqual } from "../../crypto/hmac.ts"

/** The ops page's cookie. */
export const opsCookieName = "shardline_ops"

/** Pure: the token of an `Authorization: Bearer <token>` value (scheme case-insensitive), or undefined. */
export const bearerToken = (authorization: string | undefined): string | undefined =>
  /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? "")?.[1]

/** Pure: the value of cookie `name` in a `Cookie` header, or undefined. */
export const cookieValue = (cookie: string | undefined, name: string): string | undefined => {
  for (const part of (cookie ?? "").split(";")) {
    const eq = part.indexOf("=")
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** Pure: the ops page cookie's value for a configured token (base64url HMAC-SHA256). */
export const opsCookieValue = (token: string): string => createHmac("sha256", token).update("shardline ops page cookie v1").digest("base64url")

/** Pure: the `Set-Cookie` value that lets a browser open /ops (a session cookie, /ops and below only). */
export const opsSetCookie = (token: string): string => `${opsCookieName}=${opsCookieValue(token)}; Path=/ops; HttpOnly; SameSite=Strict`

export type OpsAccess = { readonly allowed: true } | { readonly allowed: false; readonly reason: "missing" | "wrong" }

/**
 * Pure: checks an Authorization header against the configured token (undefined = open), and, when
 * `cookie` is given (the page and its stream, never /metrics), the ops page cookie. A bearer token,
 * when sent, decides alone. Both compared in constant time.
 */
export const checkOpsAccess = (token: string | undefined, authorization: string | undefined, cookie?: string): OpsAccess => {
  if (token === undefined) return { allowed: true }
  const presented = bearerToken(authorization)
  if (presented !== undefined) return constantTimeEqual(presented, token) ? { allowed: true } : { allowed: false, reason: "wrong" }
  const remembered = cookieValue(cookie, opsCookieName)
  if (remembered === undefined) return { allowed: false, reason: "missing" }
  return constantTimeEqual(remembered, opsCookieValue(token)) ? { allowed: true } : { allowed: false, reason: "wrong" }
}
