// QR sign-in and wallet linking over HTTP. Every step goes to the entity that owns it (the
// challenge's SignInChallenge, the token's SocialLinkToken), wherever in the cluster it lives; the
// keyless GET of the message to sign reads the challenge's row.
import { HttpApiBuilder, type HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import type { LinkRefused } from "../../../schemas/common/linkToken.ts"
import { SocialApi } from "../../../schemas/social/api.ts"
import { BadRequest, Conflict, Gone, ServiceUnavailable, Unauthorized } from "../../../schemas/social/errors.ts"
import { ExchangeToken, MintChallenge, PollStatus, RedeemSocialLink, SignedCallback, SignInChallenge, SocialLinkToken } from "../../../schemas/social/identity.ts"
import { base62Token, sha256Hex } from "../../crypto/token.ts"
import { AppConfig } from "../../platform/Config.ts"
import { edgeStateOf } from "../../platform/http/ServiceEdge.ts"
import { isLinkTokenShaped, linkTokenGoneBody, linkTokenId, linkTokenState, readLinkToken } from "../../platform/identity/linkTokens.ts"
import { socialFactsOf } from "../identity/SocialLinkTokenEntity.ts"
import { socialBaseUrl, socialOrigin } from "../identity/urls.ts"
import { socialManifestOf } from "../identity/walletLink.ts"
import { sessionTtlMs } from "../sessions/SessionStore.ts"
import { CHALLENGE_TTL_MS, deepLinkOf, envelopeOf, exchangeTokenParts, isChallengeId, POLL_INTERVAL_MS, signInMessage } from "../signin/challenge.ts"
import { factsOfChallenge, isExpired, readChallenge } from "../signin/SignInChallengeEntity.ts"

/** The browser's proof that it minted a challenge (only it gets the one-time token). */
export const signInCookie = "sl_signin"
/** The session, for browsers; the same token as the bearer one. */
export const sessionCookie = "sl_session"

const invalid = (name: string, why: string) => new BadRequest({ error: { code: "invalid_parameter", message: `Parameter '${name}' is invalid: ${why}` } })
const unavailable = () => new ServiceUnavailable({ error: { code: "unavailable", message: "Sign-in cannot be processed right now; please retry." } })

/** A refusal as the documented error of its status. */
export const refusalOf = (e: LinkRefused) => {
  switch (e.status) {
    case 400:
      return new BadRequest({ error: { code: "invalid_parameter", message: e.message } })
    case 401:
    case 403:
      return new Unauthorized({ error: { code: "invalid_signature", message: e.message } })
    case 409:
      return new Conflict({ error: { code: e.code === "wallet_linked" ? "wallet_linked" : "already_signed", message: e.message } })
    case 410:
      return new Gone({ error: { code: e.code === "token_expired" ? "token_expired" : "token_used", message: e.message } })
  }
}
const fromEntity = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.mapError(effect, (e) => (e._tag === "LinkRefused" ? refusalOf(e as unknown as LinkRefused) : unavailable()))

/** For steps whose only refusal is 410 (a status poll, an exchange). */
const goneOrUnavailable = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.mapError(effect, (e) => {
    const refusal = e._tag === "LinkRefused" ? (e as unknown as LinkRefused) : undefined
    return refusal?.status === 410
      ? new Gone({ error: { code: refusal.code === "token_expired" ? "token_expired" : "token_used", message: refusal.message } })
      : unavailable()
  })

const setCookie = (request: HttpServerRequest.HttpServerRequest, secure: boolean, name: string, value: string, path: string, maxAgeSec: number) => {
  const state = edgeStateOf(request)
  state.headers = {
    ...state.headers,
    "set-cookie": `${name}=${value}; Path=${path}; Max-Age=${maxAgeSec}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`,
    "cache-control": "no-store"
  }
}

export const SignInHandlers = HttpApiBuilder.group(SocialApi, "signIn", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const challenges = yield* SignInChallenge.client
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof readChallenge>>>()
    const base = socialBaseUrl(config)
    const secure = base.startsWith("https:")
    return handlers
      .handle("challenge", ({ request }) =>
        Effect.gen(function*() {
          const id = base62Token(22)
          const browser = base62Token(43)
          const issuedAtMs = Date.now()
          const facts = { id, nonce: base62Token(16), origin: socialOrigin(config), expiresAtMs: issuedAtMs + CHALLENGE_TTL_MS }
          yield* Effect.mapError(challenges(id).Mint(new MintChallenge({ ...facts, browserHash: sha256Hex(browser), issuedAtMs })), unavailable)
          setCookie(request, secure, signInCookie, browser, "/api/public/auth", CHALLENGE_TTL_MS / 1000)
          const qr = envelopeOf(facts, base)
          return { id, qr, deepLink: deepLinkOf(qr), expiresAt: new Date(facts.expiresAtMs).toISOString(), pollIntervalMs: POLL_INTERVAL_MS }
        }))
      .handle("status", ({ request, urlParams }) =>
        Effect.gen(function*() {
          if (!isChallengeId(urlParams.id)) return yield* Effect.fail(invalid("id", "not a challenge id"))
          const cookie = request.cookies[signInCookie]
          return yield* goneOrUnavailable(challenges(urlParams.id).Status(new PollStatus({ browserHash: cookie === undefined ? null : sha256Hex(cookie) })))
        }))
      .handle("callbackMessage", ({ urlParams }) =>
        Effect.gen(function*() {
          if (!isChallengeId(urlParams.id)) return yield* Effect.fail(invalid("id", "not a challenge id"))
          const row = yield* readChallenge(urlParams.id).pipe(Effect.provide(context), Effect.mapError(unavailable))
          if (Option.isNone(row)) return yield* Effect.fail(new Gone({ error: { code: "token_used", message: "No such sign-in challenge (or it is finished)." } }))
          if (isExpired(row.value, Date.now())) return yield* Effect.fail(new Gone({ error: { code: "token_expired", message: "This sign-in challenge has expired." } }))
          const facts = factsOfChallenge(row.value)
          return { id: facts.id, message: signInMessage(facts), expiresAt: new Date(facts.expiresAtMs).toISOString() }
        }))
      .handle("callback", ({ payload }) =>
        Effect.gen(function*() {
          if (!isChallengeId(payload.id)) return yield* Effect.fail(invalid("id", "not a challenge id"))
          return yield* fromEntity(challenges(payload.id).Callback(new SignedCallback({ address: payload.address.trim(), signature: payload.signature.trim() })))
        }))
      .handle("exchange", ({ payload, request }) =>
        Effect.gen(function*() {
          const parts = exchangeTokenParts(payload.token)
          if (parts === undefined) return yield* Effect.fail(invalid("token", "not a sign-in token"))
          const session = yield* goneOrUnavailable(challenges(parts.id).Exchange(new ExchangeToken({ tokenHash: sha256Hex(payload.token) })))
          setCookie(request, secure, sessionCookie, session.token, "/", sessionTtlMs / 1000)
          return session
        }))
  }))

export const SocialLinkHandlers = HttpApiBuilder.group(SocialApi, "walletLink", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const tokens = yield* SocialLinkToken.client
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof readLinkToken>>>()
    return handlers
      .handle("manifest", ({ urlParams }) =>
        Effect.gen(function*() {
          if (!isLinkTokenShaped(urlParams.token)) return yield* Effect.fail(invalid("token", "not a link token"))
          const row = yield* readLinkToken(linkTokenId(urlParams.token), "social").pipe(Effect.provide(context), Effect.mapError(unavailable))
          const state = linkTokenState(row, Date.now())
          if (state !== "usable" || Option.isNone(row)) {
            return yield* Effect.fail(linkTokenGoneBody(state === "expired" ? "expired" : "used"))
          }
          return socialManifestOf(socialFactsOf(row.value, socialOrigin(config)), socialBaseUrl(config))
        }))
      .handle("link", ({ payload }) =>
        Effect.gen(function*() {
          if (!isLinkTokenShaped(payload.token)) return yield* Effect.fail(invalid("token", "not a link token"))
          return yield* fromEntity(tokens(linkTokenId(payload.token)).Redeem(new RedeemSocialLink({ envelope: payload })))
        }))
  }))
