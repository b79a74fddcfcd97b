// The error body of the desk and social APIs: `{"error": {"code": "<snake_case>", "message": "..."}}`
// (Stripe's shape; the desk spec names a code, `unknown_signer`, and its callbacks are
// Stripe-style). One class per HTTP status, each with its own literal codes, because HttpApi
// encodes errors through one structural union: same-shaped classes would collapse onto the first
// one's status (see schemas/exchange/errors.ts). Each service declares its own classes with this.
import { type HttpApi, type HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/** `{error: {code, message}}` with these codes. */
export const errorFields = <const Codes extends readonly [string, ...Array<string>]>(codes: Codes) => ({
  error: Schema.Struct({
    code: Schema.Literal(...codes),
    message: Schema.String
  })
})

/** The base of one error class: `class NotFound extends errorClass<NotFound>()("NotFound", 404, ["not_found"], "...") {}`. */
export const errorClass = <Self>() =>
<const Codes extends readonly [string, ...Array<string>]>(identifier: string, status: number, codes: Codes, description: string) =>
  Schema.Class<Self>(identifier)(errorFields(codes), HttpApiSchema.annotations({ status, description }))

/** The JSON text of one error body. */
export const errorBody = (code: string, message: string): string => JSON.stringify({ error: { code, message } })

// The statuses both the desk and the social API answer the same way. Each service adds its own
// 401 (and the desk its 403) in its own errors module.

export class BadRequest extends errorClass<BadRequest>()(
  "BadRequest", 400, ["invalid_request", "invalid_parameter"],
  "The request is malformed (invalid_request) or a parameter is missing or invalid (invalid_parameter, the message names it)"
) {}

export class NotFound extends errorClass<NotFound>()("NotFound", 404, ["not_found"], "No such route or resource") {}

export class Conflict extends errorClass<Conflict>()(
  "Conflict", 409, ["wallet_linked", "already_signed"],
  "The wallet is already linked to another account (wallet_linked), or a one-time step was already taken (already_signed)"
) {}

export class Gone extends errorClass<Gone>()(
  "Gone", 410, ["token_used", "token_expired"],
  "A single-use token or challenge was already used (token_used) or is past its 5-minute lifetime (token_expired)"
) {}

export class MethodNotAllowed extends errorClass<MethodNotAllowed>()(
  "MethodNotAllowed", 405, ["method_not_allowed"], "A method no route takes (CONNECT)"
) {}

export class RequestTimeout extends errorClass<RequestTimeout>()(
  "RequestTimeout", 408, ["request_timeout"], "The request was not received in time"
) {}

export class PayloadTooLarge extends errorClass<PayloadTooLarge>()(
  "PayloadTooLarge", 413, ["body_too_large"], "The request body is over the listener's limit"
) {}

export class TooManyRequests extends errorClass<TooManyRequests>()(
  "TooManyRequests", 429, ["rate_limited"], "The client IP's request weight per minute is used up; see Retry-After"
) {}

export class HeadersTooLarge extends errorClass<HeadersTooLarge>()(
  "HeadersTooLarge", 431, ["headers_too_large"], "The request line or headers are over 16 KB"
) {}

export class ServiceUnavailable extends errorClass<ServiceUnavailable>()(
  "ServiceUnavailable", 503, ["unavailable", "internal"],
  "A dependency is unavailable (unavailable) or something unexpected failed (internal); safe to retry"
) {}


export class IdempotencyKeyReused extends errorClass<IdempotencyKeyReused>()(
  "IdempotencyKeyReused", 422, ["idempotency_key_reused"],
  "The caller (a social account, a desk API key) already used this Idempotency-Key for a different request payload (draft-ietf-httpapi-idempotency-key-header §2.7)"
) {}

/**
 * The 503 answer when a dependency (the database, an entity, the ledger) did not answer: the one
 * way the desk and social build it; `message` says what could not be done.
 */
export const unavailable = (message = "The service could not answer now; please retry.") =>
  new ServiceUnavailable({ error: { code: "unavailable", message } })

/** The 422 answer to a reused Idempotency-Key. */
export const idempotencyKeyReused = () =>
  new IdempotencyKeyReused({ error: { code: "idempotency_key_reused", message: "This Idempotency-Key was used for a different request payload." } })


/** Adds the common error classes to a service's HttpApi (documented on every route). */
export const withCommonErrors = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<Id, Groups, E, R>) =>
  api.addError(BadRequest).addError(NotFound).addError(MethodNotAllowed).addError(RequestTimeout)
    .addError(PayloadTooLarge).addError(TooManyRequests).addError(HeadersTooLarge).addError(ServiceUnavailable)

/** Any JSON value, as one named schema: OpenAPI then defines it once and refers to it (an
 * unnamed `Schema.Unknown` in two places gave the document two definitions with one `$id`). */
export const JsonValue = Schema.Unknown.annotations({ identifier: "JsonValue", description: "Any JSON value" })
