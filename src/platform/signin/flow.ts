// The wallet sign-in of every listener over HTTP, without the service's error shape: each step goes
// to the SignInChallenge entity that owns the challenge (wherever in the cluster it lives); the
// keyless GET of the message reads the challenge's row. A service's handlers call these and map a
// refusal (LinkRefused: status, code, message) and SignInUnavailable to its own error classes.
// Cookies are named per service (`<prefix>_signin`, `<prefix>_session`): browsers share cookies
// across the ports of one host, and a session opens only its own service.
import type { HttpServerRequest } from "@effect/platform"
import { Data, Effect, Option } from "effect"
import { LinkRefused } from "../../../schemas/common/linkToken.ts"
import { ExchangeToken, MintChallenge, PollStatus, SignedCallback, SignInChallenge } from "../../../schemas/common/signIn.ts"
import { base62Token, sha256Hex } from "../../crypto/token.ts"
import { edgeStateOf } from "../http/ServiceEdge.ts"
import { signInCrossSiteRefusal } from "./csrf.ts"
import { CHALLENGE_TTL_MS, deepLinkOf, envelopeOf, exchangeTokenParts, isChallengeId, POLL_INTERVAL_MS, signInMessage } from "./challenge.ts"
import { factsOfChallenge, isExpired, readChallenge } from "./SignInChallengeEntity.ts"
import { revokeByHash, sessionTtlMs, type WebSession } from "./sessionStore.ts"
import { WebSessions } from "./WebSessions.ts"

export class SignInUnavailable extends Data.TaggedError("SignInUnavailable")<{}> {}

export interface SignInSite<R> {
  /** The row label of challenges and sessions: "exchange", "desk", "social". */
  readonly service: string
  /** The listener's public base URL (QR callback) and origin (the message names it). */
  readonly baseUrl: string
  /** Cookie names start with it: `sl` gives sl_signin and sl_session. */
  readonly cookiePrefix: string
  /** A wallet without an account gets one by signing in: called with the address on every exchange. */
  readonly onSignedIn: (address: string) => Effect.Effect<void, never, R>
}

export const cookieNames = (prefix: string) => ({ signIn: `${prefix}_signin`, session: `${prefix}_session` })

const invalid = (name: string, why: string) => new LinkRefused({ status: 400, code: "invalid_parameter", message: `Parameter '${name}' is invalid: ${why}` })

/** Adds a Set-Cookie to the answer; several cookies in one answer are kept apart. */
export const setCookie = (request: HttpServerRequest.HttpServerRequest, cookie: { name: string; value: string; path: string; maxAgeSec: number; secure: boolean }) => {
  const state = edgeStateOf(request)
  const line = `${cookie.name}=${cookie.value}; Path=${cookie.path}; Max-Age=${cookie.maxAgeSec}; HttpOnly; SameSite=Strict${cookie.secure ? "; Secure" : ""}`
  state.headers = { ...state.headers, "set-cookie": line, "cache-control": "no-store" }
}

/** A refusal or an outage stays as it is; anything else the entity answered is an outage. */
const fromEntity = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.mapError(effect, (e): LinkRefused | SignInUnavailable => (e._tag === "LinkRefused" ? (e as unknown as LinkRefused) : new SignInUnavailable()))

export const makeSignInFlow = <R>(site: SignInSite<R>) =>
  Effect.gen(function*() {
    const challenges = yield* SignInChallenge.client
    const sessions = yield* WebSessions
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof readChallenge>> | R>()
    const origin = new URL(site.baseUrl).origin
    const secure = site.baseUrl.startsWith("https:")
    const cookies = cookieNames(site.cookiePrefix)
    const checkId = (id: string) => (isChallengeId(id) ? Effect.void : Effect.fail(invalid("id", "not a challenge id")))

    return {
      cookies,
      challenge: (request: HttpServerRequest.HttpServerRequest) =>
        Effect.gen(function*() {
          const id = base62Token(22)
          const browser = base62Token(43)
          const issuedAtMs = Date.now()
          const facts = { id, nonce: base62Token(16), origin, expiresAtMs: issuedAtMs + CHALLENGE_TTL_MS }
          yield* Effect.mapError(challenges(id).Mint(new MintChallenge({ ...facts, service: site.service, browserHash: sha256Hex(browser), issuedAtMs })), () => new SignInUnavailable())
          setCookie(request, { name: cookies.signIn, value: browser, path: "/api/public/auth", maxAgeSec: CHALLENGE_TTL_MS / 1000, secure })
          const qr = envelopeOf(facts, site.baseUrl)
          return { id, qr, deepLink: deepLinkOf(qr), expiresAt: new Date(facts.expiresAtMs).toISOString(), pollIntervalMs: POLL_INTERVAL_MS }
        }),

      status: (request: HttpServerRequest.HttpServerRequest, id: string) =>
        Effect.gen(function*() {
          yield* checkId(id)
          const cookie = request.cookies[cookies.signIn]
          return yield* fromEntity(challenges(id).Status(new PollStatus({ browserHash: cookie === undefined ? null : sha256Hex(cookie) })))
        }),

      callbackMessage: (id: string) =>
        Effect.gen(function*() {
          yield* checkId(id)
          const row = yield* readChallenge(id).pipe(Effect.provide(context), Effect.mapError(() => new SignInUnavailable()))
          if (Option.isNone(row)) return yield* new LinkRefused({ status: 410, code: "token_used", message: "No such sign-in challenge (or it is finished)." })
          if (isExpired(row.value, Date.now())) return yield* new LinkRefused({ status: 410, code: "token_expired", message: "This sign-in challenge has expired." })
          const facts = factsOfChallenge(row.value)
          return { id: facts.id, message: signInMessage(facts), expiresAt: new Date(facts.expiresAtMs).toISOString() }
        }),

      callback: (payload: { readonly id: string; readonly address: string; readonly signature: string }) =>
        Effect.gen(function*() {
          yield* checkId(payload.id)
          return yield* fromEntity(challenges(payload.id).Callback(new SignedCallback({ address: payload.address.trim(), signature: payload.signature.trim() })))
        }),

      exchange: (request: HttpServerRequest.HttpServerRequest, token: string) =>
        Effect.gen(function*() {
          const crossSite = signInCrossSiteRefusal(request.headers)
          if (crossSite !== undefined) return yield* new LinkRefused({ status: 403, code: "cross_site_refused", message: crossSite })
          const parts = exchangeTokenParts(token)
          if (parts === undefined) return yield* invalid("token", "not a sign-in token")
          const session = yield* fromEntity(challenges(parts.id).Exchange(new ExchangeToken({ tokenHash: sha256Hex(token) })))
          yield* Effect.provide(site.onSignedIn(session.address), context)
          setCookie(request, { name: cookies.session, value: session.token, path: "/", maxAgeSec: sessionTtlMs / 1000, secure })
          return session
        }),

      /** Ends the request's own session everywhere (this node at once, the others within 2 s) and clears its cookie. */
      signOut: (request: HttpServerRequest.HttpServerRequest, session: WebSession) =>
        Effect.gen(function*() {
          const ended = yield* revokeByHash(session.tokenHash).pipe(Effect.provide(context), Effect.mapError(() => new SignInUnavailable()))
          sessions.forget(session.tokenHash)
          setCookie(request, { name: cookies.session, value: "", path: "/", maxAgeSec: 0, secure })
          return ended
        })
    }
  })

export type SignInFlow = Effect.Effect.Success<ReturnType<typeof makeSignInFlow>>
