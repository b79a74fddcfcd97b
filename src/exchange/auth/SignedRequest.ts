// The edge around signature.ts: reads the raw request, finds the key, applies the checks in
// Binance's order (key, IP allowlist, timing, signature, scope) and yields the caller.
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { apiError, messages, type ApiError } from "../../../schemas/exchange/errors.ts"
import { ApiKeys, type ApiKeyRecord, type Scope } from "./ApiKeys.ts"
import { checkSignature, checkTiming, isRefusal, parseParams } from "./signature.ts"

export interface SignedCall {
  readonly caller: ApiKeyRecord
  readonly params: ReadonlyMap<string, string>
}

/** Largest body a signed call may carry; order bodies are a few hundred bytes. */
export const bodyBytesMax = 16 * 1024

/** "::ffff:127.0.0.1" and "127.0.0.1" are the same client. */
export const normalizeIp = (ip: string): string => (ip.startsWith("::ffff:") ? ip.slice(7) : ip)

export const clientIp = (request: HttpServerRequest.HttpServerRequest): string =>
  normalizeIp(Option.getOrElse(request.remoteAddress, () => "unknown"))

export const apiKeyHeader = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  request.headers["x-svc-apikey"] ?? request.headers["x-mbx-apikey"]

const rawQueryOf = (url: string): string => {
  const q = url.indexOf("?")
  return q < 0 ? "" : url.slice(q + 1)
}

export const verifySigned = (scope: Scope): Effect.Effect<SignedCall, ApiError, HttpServerRequest.HttpServerRequest | ApiKeys> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const keys = yield* ApiKeys
    const apiKey = apiKeyHeader(request)
    if (apiKey === undefined || apiKey === "") return yield* Effect.fail(apiError(-2015, messages.invalidKey))
    const found = yield* keys.lookup(apiKey)
    if (Option.isNone(found)) return yield* Effect.fail(apiError(-2015, messages.invalidKey))
    const caller = found.value
    if (caller.ipAllowlist.length > 0 && !caller.ipAllowlist.includes(clientIp(request))) {
      return yield* Effect.fail(apiError(-1004, messages.ipNotAllowed))
    }
    const contentType = (request.headers["content-type"] ?? "").toLowerCase()
    const rawBody = request.method === "GET" || request.method === "HEAD"
      ? ""
      : yield* request.text.pipe(
        HttpServerRequest.withMaxBodySize(Option.some(bodyBytesMax)),
        Effect.catchAll(() => Effect.fail(apiError(-1104, "Request body is too large or unreadable.")))
      )
    const parsed = parseParams(rawQueryOf(request.url), rawBody, contentType.startsWith("application/x-www-form-urlencoded"))
    if (isRefusal(parsed)) return yield* Effect.fail(apiError(parsed.code, parsed.msg))
    const timing = checkTiming(parsed.params, Date.now())
    if (timing) return yield* Effect.fail(apiError(timing.code, timing.msg))
    const bad = checkSignature(caller.secret, parsed.payload, parsed.signature)
    if (bad) return yield* Effect.fail(apiError(bad.code, bad.msg))
    if (!caller.scopes.includes(scope)) return yield* Effect.fail(apiError(-2015, messages.invalidKey))
    return { caller, params: parsed.params }
  })
