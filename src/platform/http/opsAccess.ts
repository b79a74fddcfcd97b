// Who may read /ops and /metrics. They show runner addresses, shard owners and traffic, so a node
// reachable from outside should require SHARDLINE_OPS_TOKEN as a bearer token (Prometheus sends
// one with `authorization: {credentials: …}`). Unset, they stay open: the embedded default binds
// to 127.0.0.1, and a local operator needs no ceremony.
import { constantTimeEqual } from "../../crypto/hmac.ts"

/** Pure: the token of an `Authorization: Bearer <token>` value (scheme case-insensitive), or undefined. */
export const bearerToken = (authorization: string | undefined): string | undefined =>
  /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? "")?.[1]

export type OpsAccess = { readonly allowed: true } | { readonly allowed: false; readonly reason: "missing" | "wrong" }

/** Pure: checks an Authorization header against the configured token (undefined = open). */
export const checkOpsAccess = (token: string | undefined, authorization: string | undefined): OpsAccess => {
  if (token === undefined) return { allowed: true }
  const presented = bearerToken(authorization)
  if (presented === undefined) return { allowed: false, reason: "missing" }
  return constantTimeEqual(presented, token) ? { allowed: true } : { allowed: false, reason: "wrong" }
}
