// Signed exchange calls (spec: Authentication) as HttpApi middleware on the signed groups. The
// checks run in Binance's order: key, IP allowlist, parameters, timing, signature, scope. Only a
// call that proved its key is charged to the key's weight budget: a failed one was already
// charged to the client IP by the edge, so knowing someone's key id cannot lock its owner out.
import { HttpServerRequest } from "@effect/platform"
import { Effect, Either, Layer, Option } from "effect"
import { apiError, messages, type ApiError } from "../../../schemas/exchange/errors.ts"
import { Caller, type Scope, type SignedCall, SignedRead, SignedTrade, VerifiedParams } from "../../../schemas/exchange/security.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import { edgeStateOf } from "../../platform/http/ServiceEdge.ts"
import { RateLimiter, type RateLimiterShape } from "../../platform/RateLimiter.ts"
import { type ApiKeyRecord, ApiKeys } from "./ApiKeys.ts"
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

/** What a signed call's checks decide: the verified call, or the refusal; with the headers to send. */
export type SignedCheck =
  | { readonly ok: true; readonly call: SignedCall; readonly headers: Record<string, string> }
  | { readonly ok: false; readonly error: ApiError; readonly headers: Record<string, string> }

export interface SignedRequest {
  readonly apiKey: string
  readonly key: Option.Option<ApiKeyRecord>
  readonly ip: string
  readonly rawQuery: string
  readonly body: string
  /** The route's weight, charged to the key once the call proved it. */
  readonly weight: number
  /** The edge's headers so far (the IP bucket's usage). */
  readonly headers: Record<string, string>
}

/**
 * Every check of a signed call after the key was found, in Binance's order: IP allowlist,
 * parameters, timing, signature, scope, then the key's weight. Synchronous and shared by the
 * HttpApi middleware and the edge's signed lane (SignedLane.ts), so both answer alike.
 */
export const checkSigned = (r: SignedRequest, scope: Scope, limiter: RateLimiterShape, keyLimit: number, nowMs: number): SignedCheck => {
  const no = (code: Parameters<typeof apiError>[0], msg: string, headers = r.headers): SignedCheck => ({ ok: false, error: apiError(code, msg), headers })
  if (Option.isNone(r.key)) return no(-2015, messages.invalidKey)
  const key = r.key.value
  if (key.ipAllowlist.length > 0 && !key.ipAllowlist.includes(r.ip)) return no(-1004, messages.ipNotAllowed)
  const parsed = parseSigned(r.rawQuery, r.body)
  if (Either.isLeft(parsed)) return no(parsed.left.code, parsed.left.msg)
  const { params, payload, signature } = parsed.right
  const refusal = checkTiming(params, nowMs) ?? checkSignature(key.secret, payload, signature)
  if (refusal !== undefined) return no(refusal.code, refusal.msg)
  if (!key.scopes.includes(scope)) return no(-2015, messages.invalidKey)
  const usage = limiter.consume(`key:${r.apiKey}`, r.weight, keyLimit)
  const headers = exchangeUsageHeaders(usage)
  if (!usage.allowed) return no(-1003, messages.rateLimit(keyLimit), { ...headers, "retry-after": String(usage.retryAfterSec) })
  const params1: Record<string, string> = Object.fromEntries(params)
  params1["signature"] = signature ?? ""
  return { ok: true, call: { apiKey: r.apiKey, userId: key.userId, scopes: key.scopes, params: params1 }, headers }
}

/** The API key header (either name); undefined when absent or empty. */
export const apiKeyOf = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>): string | undefined => {
  const value = headers["x-svc-apikey"] ?? headers["x-mbx-apikey"]
  return typeof value === "string" && value !== "" ? value : undefined
}

const makeVerifier = (scope: Scope) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const limiter = yield* RateLimiter
    const keyLimit = (yield* ExchangeConfig).rateLimitKeyWeightPerMin
    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const state = edgeStateOf(request)
      const apiKey = apiKeyOf(request.headers)
      if (apiKey === undefined) return yield* refuse(-2015, messages.invalidKey)
      const cached = keys.peek(apiKey)
      const key = cached === undefined ? yield* keys.lookup(apiKey) : cached
      if (Option.isSome(key) && key.value.ipAllowlist.length > 0 && !key.value.ipAllowlist.includes(state.ip)) return yield* refuse(-1004, messages.ipNotAllowed)
      const body = Option.isNone(key) ? "" : yield* readBody(request)
      const checked = checkSigned({ apiKey, key, ip: state.ip, rawQuery: rawQueryOf(request.url), body, weight: state.weight, headers: state.headers }, scope, limiter, keyLimit, Date.now())
      state.headers = checked.headers
      if (!checked.ok) return yield* Effect.fail(checked.error)
      return checked.call
    })
  })

export const layerRead = Layer.effect(SignedRead, Effect.map(makeVerifier("read"), (verify) => ({ apiKey: () => verify })))
export const layerTrade = Layer.effect(SignedTrade, Effect.map(makeVerifier("trade"), (verify) => ({ apiKey: () => verify })))

/** The endpoint's urlParams schema decodes the signed parameters (Caller is provided by the signed middleware, which runs first). */
export const layerVerifiedParams = Layer.succeed(
  VerifiedParams,
  Effect.map(Caller, (call) => call.params) as unknown as Effect.Effect<Readonly<Record<string, string>>>
)

export const layer = Layer.mergeAll(layerRead, layerTrade, layerVerifiedParams)
