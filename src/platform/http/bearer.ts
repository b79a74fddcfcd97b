// The credential of a request, read the same way whichever security scheme HttpApi tried: with
// two schemes HttpApiBuilder runs them in turn and reports the last failure, so each handler
// reads every header itself and gives the same answer.
import type { HttpServerRequest } from "@effect/platform"
import { bearerToken } from "./opsAccess.ts"
import { edgeStateOf } from "./ServiceEdge.ts"

/** An Effect request or node's IncomingMessage: both keep headers by lower-case name. */
interface WithHeaders {
  readonly headers: { readonly [name: string]: string | ReadonlyArray<string> | undefined }
}

const single = (value: string | ReadonlyArray<string> | undefined): string | undefined => (typeof value === "string" ? value : value?.[0])

/** `Authorization: Bearer <token>` (scheme case-insensitive), or undefined. */
export const bearerOf = (request: WithHeaders): string | undefined => bearerToken(single(request.headers["authorization"]))

/** The named header's value when non-empty, else the bearer token. */
export const headerOrBearer = (request: WithHeaders, header: string): string | undefined => {
  const value = single(request.headers[header])
  return value !== undefined && value !== "" ? value : bearerOf(request)
}

/** A 401 answer names the scheme (RFC 9110 11.6.1). */
export const challengeBearer = (request: HttpServerRequest.HttpServerRequest): void => {
  const state = edgeStateOf(request)
  state.headers = { ...state.headers, "www-authenticate": "Bearer" }
}
