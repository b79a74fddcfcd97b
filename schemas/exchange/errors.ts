// The exchange's error body is Binance's: {code, msg}. One class per HTTP status, each with its
// own literal code set, because HttpApi encodes errors through one structural union and
// same-shaped classes would collapse onto the first one's status.
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class BadRequest extends Schema.Class<BadRequest>("BadRequest")(
  {
    code: Schema.Literal(-1013, -1020, -1021, -1022, -1100, -1101, -1102, -1104, -1115, -1116, -1120, -1121, -1128, -1130, -1131, -2010, -2011, -2013),
    msg: Schema.String
  },
  HttpApiSchema.annotations({ status: 400, description: "Request refused: see code" })
) {}

export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")(
  { code: Schema.Literal(-2014, -2015, -2033), msg: Schema.String },
  HttpApiSchema.annotations({ status: 401, description: "Invalid API-key, IP, or permissions for action" })
) {}

export class Forbidden extends Schema.Class<Forbidden>("Forbidden")(
  { code: Schema.Literal(-1004, -2032), msg: Schema.String },
  HttpApiSchema.annotations({ status: 403, description: "Request from an address outside the key's IP allowlist (-1004), or a change on a browser session that did not come from the web app's own pages (-2032)" })
) {}

// The wallet sign-in's one-time steps (schemas/common/signIn.ts): Binance has no codes for them, so
// ours continue its -20xx family.
export class Conflict extends Schema.Class<Conflict>("Conflict")(
  { code: Schema.Literal(-2030), msg: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "The sign-in challenge was already signed" })
) {}

export class Gone extends Schema.Class<Gone>("Gone")(
  { code: Schema.Literal(-2031), msg: Schema.String },
  HttpApiSchema.annotations({ status: 410, description: "The sign-in challenge or one-time token was already used or is past its 5 minutes" })
) {}

export class NotFound extends Schema.Class<NotFound>("NotFound")(
  { code: Schema.Literal(-1020), msg: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No such endpoint" })
) {}

export class TooManyRequests extends Schema.Class<TooManyRequests>("TooManyRequests")(
  { code: Schema.Literal(-1003), msg: Schema.String },
  HttpApiSchema.annotations({ status: 429, description: "Request weight budget exceeded; see Retry-After" })
) {}

export class ServiceUnavailable extends Schema.Class<ServiceUnavailable>("ServiceUnavailable")(
  { code: Schema.Literal(-1000, -1001, -1007), msg: Schema.String },
  HttpApiSchema.annotations({ status: 503, description: "Internal error or upstream unavailable; execution status unknown" })
) {}

export type ApiError = BadRequest | Unauthorized | Forbidden | NotFound | TooManyRequests | ServiceUnavailable
export type ApiErrorCode = ApiError["code"]

/** HTTP status of each code, as Binance answers it. */
export const statusOf = (code: ApiErrorCode): number => {
  switch (code) {
    case -2014:
    case -2015:
    case -2033:
      return 401
    case -1004:
    case -2032:
      return 403

    case -1020:
      return 404
    case -1003:
      return 429
    case -1000:
    case -1001:
    case -1007:
      return 503
    default:
      return 400
  }
}

/** The 503 answer (-1001) when a dependency (the database, an entity) did not answer: the one way the exchange builds it. */
export const unavailable = (msg = "Internal error; unable to process your request. Please try again."): ServiceUnavailable =>
  new ServiceUnavailable({ code: -1001, msg })

/** Builds the error value of the right class for a code. */
export const apiError = (code: ApiErrorCode, msg: string): ApiError => {
  switch (statusOf(code)) {
    case 401:
      return new Unauthorized({ code: code as Unauthorized["code"], msg })
    case 403:
      return new Forbidden({ code: code as Forbidden["code"], msg })
    case 404:
      return new NotFound({ code: code as NotFound["code"], msg })

    case 429:
      return new TooManyRequests({ code: code as TooManyRequests["code"], msg })
    case 503:
      return new ServiceUnavailable({ code: code as ServiceUnavailable["code"], msg })
    default:
      return new BadRequest({ code: code as BadRequest["code"], msg })
  }
}

/** Binance's message texts, so clients that match on text (ccxt) behave the same. */
export const messages = {
  missing: (name: string) => `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`,
  illegal: (name: string, legal: string) => `Illegal characters found in parameter '${name}'; legal range is '${legal}'.`,
  invalidKey: "Invalid API-key, IP, or permissions for action.",
  ipNotAllowed: "IP address is not in the API key's allowlist.",
  recvWindow: "Timestamp for this request is outside of the recvWindow.",
  ahead: "Timestamp for this request was 1000ms ahead of the server's time.",
  recvWindowMax: "recvWindow must be less than 60000",
  signature: "Signature for this request is not valid.",
  rateLimit: (limit: number) =>
    `Too much request weight used; current limit is ${limit} request weight per 1 MINUTE. Please use the SSE stream for live updates to avoid polling the API.`,
  unsupported: "This operation is not supported.",
  malformed: "Malformed request.",
  internal: "An unknown error occurred while processing the request."
} as const
