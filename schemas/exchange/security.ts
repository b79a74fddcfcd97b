// How a signed exchange call proves itself (spec: Authentication), as HttpApi middleware
// declarations: the API key header and the HMAC signature. The implementations live in
// src/exchange/auth/SignedAuth.ts.
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { BadRequest, Forbidden, ServiceUnavailable, TooManyRequests, Unauthorized } from "./errors.ts"

export type Scope = "read" | "trade"

/** The verified caller of a signed request, and the parameters exactly as they were signed. */
export interface SignedCall {
  readonly apiKey: string
  readonly userId: number
  readonly scopes: ReadonlyArray<Scope>
  readonly params: Readonly<Record<string, string>>
}

export class Caller extends Context.Tag("shardline/exchange/Caller")<Caller, SignedCall>() {}

const header = "X-MBX-APIKEY"
const security = {
  apiKey: HttpApiSecurity.apiKey({ in: "header", key: header }).pipe(
    HttpApiSecurity.annotate(
      OpenApi.Description,
      "The API key (X-MBX-APIKEY or X-SVC-APIKEY), together with the `signature` parameter: lowercase hex HMAC-SHA256, keyed with the key's secret, of the query string without `signature` followed by the raw body."
    )
  )
}
/** What a signed call can fail with before its handler runs. */
const SignedFailure = Schema.Union(BadRequest, Unauthorized, Forbidden, TooManyRequests, ServiceUnavailable)

/** Signed, read scope: the caller and its verified parameters. */
export class SignedRead extends HttpApiMiddleware.Tag<SignedRead>()("exchange/SignedRead", {
  provides: Caller,
  failure: SignedFailure,
  security
}) {}

/** Signed, trade scope. */
export class SignedTrade extends HttpApiMiddleware.Tag<SignedTrade>()("exchange/SignedTrade", {
  provides: Caller,
  failure: SignedFailure,
  security
}) {}

/** Hands the signed parameters to the endpoint's own urlParams schema: an endpoint decodes what was
 * signed (query and form body as one string), never the query alone. Runs after the signature. */
export class VerifiedParams extends HttpApiMiddleware.Tag<VerifiedParams>()("exchange/VerifiedParams", {
  provides: HttpServerRequest.ParsedSearchParams
}) {}
