// Signed exchange calls (spec: Authentication) as HttpApi middleware on the signed groups. The
// checks run in Binance's order: key, IP allowlist, parameters, timing, signature, scope. Only a
// call that proved its key is charged to the key's weight budget: a failed one was already
// charged to the client IP by the edge, so knowing someone's key id cannot lock its owner out.
import { HttpServerRequest } from "@effect/platform"
import { Effect, Either, Layer, Option } from "effect"
import { apiError, messages, type ApiError } from "../../../schemas/exchange/errors.ts"
import { Caller, type Scope, type SignedCall, SignedRead, SignedTrade, VerifiedParams } from "../../../schemas/exchange/security.ts"
import { AppConfig } from "../../platform/Config.ts"
import { edgeStateOf } from "../../platform/http/ServiceEdge.ts"
import { RateLimiter } from "../../platform/RateLimiter.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { checkSignature, checkTiming, parseSigned } from "./signature.ts"
import { exchangeUsageHeaders } from "../http/ExchangeEdge.ts"

/** Largest body a signed call may carry; order bodies are a few hundred bytes. */
export const bodyBytesMax = 16 * 1024

const rawQueryOf = (url: string): string => {
  const q = url.indexOf("?")
  return q < 0 ? "" : url.slice(q + 1)
}

const refuse = (code: Parameters<typeof apiError>[0], msg: string) => Effect.fail(apiError(code, msg))

const readBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string, ApiError> =>
  request.method === "GET" || request.method === "HEAD"
    ? Effect.succeed("")
    : request.text.pipe(
      HttpServerRequest.withMaxBodySize(Option.some(bodyBytesMax)),
      Effect.catchAll(() => refuse(-1104, "Request body is too large or unreadable."))
    )

const makeVerifier = (scope: Scope) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const limiter = yield* RateLimiter
    const keyLimit = (yield* AppConfig).rateLimitKeyWeightPerMin
    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const state = edgeStateOf(request)
      const apiKey = request.headers["x-svc-apikey"] ?? request.headers["x-mbx-apikey"]
      if (apiKey === undefined || apiKey === "") return yield* refuse(-2015, messages.invalidKey)
      const cached = keys.peek(apiKey)
      const found = cached === undefined ? yield* keys.lookup(apiKey) : cached
      if (Option.isNone(found)) return yield* refuse(-2015, messages.invalidKey)
      const key = found.value
      if (key.ipAllowlist.length > 0 && !key.ipAllowlist.includes(state.ip)) return yield* refuse(-1004, messages.ipNotAllowed)
      const parsed = parseSigned(rawQueryOf(request.url), yield* readBody(request))
      if (Either.isLeft(parsed)) return yield* refuse(parsed.left.code, parsed.left.msg)
      const { params, payload, signature } = parsed.right
      const refusal = checkTiming(params, Date.now()) ?? checkSignature(key.secret, payload, signature)
      if (refusal !== undefined) return yield* refuse(refusal.code, refusal.msg)
      if (!key.scopes.includes(scope)) return yield* refuse(-2015, messages.invalidKey)
      const usage = limiter.consume(`key:${apiKey}`, state.weight, keyLimit)
      state.headers = exchangeUsageHeaders(usage)
      if (!usage.allowed) {
        state.headers = { ...state.headers, "retry-after": String(usage.retryAfterSec) }
        return yield* refuse(-1003, messages.rateLimit(keyLimit))
      }
      const call: SignedCall = {
        apiKey,
        userId: key.userId,
        scopes: key.scopes,
        params: Object.fromEntries([...params, ["signature", signature ?? ""]])
      }
      return call
    })
  })

export const SignedReadLive = Layer.effect(SignedRead, Effect.map(makeVerifier("read"), (verify) => ({ apiKey: () => verify })))
export const SignedTradeLive = Layer.effect(SignedTrade, Effect.map(makeVerifier("trade"), (verify) => ({ apiKey: () => verify })))

/** The endpoint's urlParams schema decodes the signed parameters (Caller is provided by the signed middleware, which runs first). */
export const VerifiedParamsLive = Layer.succeed(
  VerifiedParams,
  Effect.map(Caller, (call) => call.params) as unknown as Effect.Effect<Readonly<Record<string, string>>>
)

export const SignedAuthLive = Layer.mergeAll(SignedReadLive, SignedTradeLive, VerifiedParamsLive)
