// QR sign-in and wallet linking over HTTP. Every step goes to the entity that owns it (the
// challenge's SignInChallenge, the token's SocialLinkToken), wherever in the cluster it lives; the
// keyless GET of the message to sign reads the challenge's row.
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { LinkRefused } from "../../../schemas/common/linkToken.ts"
import { SocialApi } from "../../../schemas/social/api.ts"
import { BadRequest, Conflict, Forbidden, Gone, Unauthorized, unavailable } from "../../../schemas/social/errors.ts"
import { RedeemSocialLink, SocialLinkToken } from "../../../schemas/social/identity.ts"
import { issuedUrls, isLinkTokenShaped, linkTokenGoneBody, linkTokenId, linkTokenState, readLinkToken } from "../../platform/identity/linkTokens.ts"
import { socialFactsOf } from "../identity/SocialLinkTokenEntity.ts"
import { socialUrls } from "../identity/urls.ts"
import { makeSignInFlow } from "../../platform/signin/flow.ts"
import { socialLinkPage, socialLinkUrl, socialManifestOf } from "../identity/walletLink.ts"
import { prefersHtml, publicPageCsp, qrSvg } from "../../platform/webapp/publicPages.ts"
import { ensureAccount } from "../accounts/me.ts"

const invalid = (name: string, why: string) => new BadRequest({ error: { code: "invalid_parameter", message: `Parameter '${name}' is invalid: ${why}` } })
const signInUnavailable = () => unavailable("Sign-in cannot be processed right now; please retry.")

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
  Effect.mapError(effect, (e) => (e._tag === "LinkRefused" ? refusalOf(e as unknown as LinkRefused) : signInUnavailable()))

/** For steps whose only refusals are 400 and 410 (a status poll, the message, an exchange). */
const goneOrUnavailable = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.mapError(effect, (e) => {
    const refusal = e._tag === "LinkRefused" ? (e as unknown as LinkRefused) : undefined
    if (refusal?.status === 400) return new BadRequest({ error: { code: "invalid_parameter", message: refusal.message } })
    return refusal?.status === 410
      ? new Gone({ error: { code: refusal.code === "token_expired" ? "token_expired" : "token_used", message: refusal.message } })
      : signInUnavailable()
  })

/** wallet-exchange: a cross-site attempt (login CSRF) is 403 cross_site_refused; else as the other steps. */
const exchangeRefusal = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.catchAll(effect, (e): Effect.Effect<never, Forbidden | BadRequest | Gone | ReturnType<typeof signInUnavailable>> => {
    const refusal = e._tag === "LinkRefused" ? (e as unknown as LinkRefused) : undefined
    return refusal?.status === 403
      ? Effect.fail(new Forbidden({ error: { code: "cross_site_refused", message: refusal.message } }))
      : goneOrUnavailable(Effect.fail(e))
  })

/** The social listener's site in the shared sign-in: an account is its identity address; a wallet
 * without one gets one by signing in (src/social/accounts/me.ts). */
export const socialSignIn = Effect.map(socialUrls, (urls) =>
  makeSignInFlow({ service: "social", baseUrl: urls.base, cookiePrefix: "sl", onSignedIn: (address) => Effect.orDie(ensureAccount(address)) }))

export const SignInHandlers = HttpApiBuilder.group(SocialApi, "signIn", (handlers) =>
  Effect.gen(function*() {
    const flow = yield* Effect.flatten(socialSignIn)
    return handlers
      .handle("challenge", ({ request }) => Effect.mapError(flow.challenge(request), signInUnavailable))
      .handle("status", ({ request, urlParams }) => goneOrUnavailable(flow.status(request, urlParams.id)))
      .handle("callbackMessage", ({ urlParams }) => goneOrUnavailable(flow.callbackMessage(urlParams.id)))
      .handle("callback", ({ payload }) => fromEntity(flow.callback(payload)))
      .handle("exchange", ({ payload, request }) => exchangeRefusal(flow.exchange(request, payload.token)))
  }))

export const SocialLinkHandlers = HttpApiBuilder.group(SocialApi, "walletLink", (handlers) =>
  Effect.gen(function*() {
    const urls = yield* socialUrls
    const tokens = yield* SocialLinkToken.client
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof readLinkToken>>>()
    return handlers
      .handle("manifest", ({ request, urlParams }) =>
        Effect.gen(function*() {
          if (!isLinkTokenShaped(urlParams.token)) return yield* Effect.fail(invalid("token", "not a link token"))
          const row = yield* readLinkToken(linkTokenId(urlParams.token), "social").pipe(Effect.provide(context), Effect.mapError(signInUnavailable))
          const state = linkTokenState(row, Date.now())
          if (state !== "usable" || Option.isNone(row)) {
            return yield* Effect.fail(linkTokenGoneBody(state === "expired" ? "expired" : "used"))
          }
          const issued = issuedUrls(row.value, urls)
          const manifest = socialManifestOf(socialFactsOf(row.value, issued.origin), issued.base)
          // Wallets and programs (no Accept, */*, JSON) get the manifest; a browser the page to scan.
          const headers = { "cache-control": "no-store", vary: "Accept" }
          if (!prefersHtml(request.headers["accept"])) return HttpServerResponse.unsafeJson(manifest, { headers })
          const url = `${socialLinkUrl(issued.base)}?token=${urlParams.token}`
          return HttpServerResponse.html(socialLinkPage(manifest, url, yield* qrSvg(url))).pipe(HttpServerResponse.setHeaders({
            ...headers, "content-security-policy": publicPageCsp(false), "x-content-type-options": "nosniff", "referrer-policy": "no-referrer"
          }))
        }))
      .handle("link", ({ payload }) =>
        Effect.gen(function*() {
          if (!isLinkTokenShaped(payload.token)) return yield* Effect.fail(invalid("token", "not a link token"))
          return yield* fromEntity(tokens(linkTokenId(payload.token)).Redeem(new RedeemSocialLink({ envelope: payload })))
        }))
  }))
