// Wallet linking and rewards over HTTP: GET shows a link token's manifest (JSON or the HTML page),
// POST hands the envelope to the token's DeskLinkToken entity (wherever in the cluster it lives),
// rewards/balance reads the caller's member's LinkedWallet samples.
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { LinkRefused } from "../../../schemas/common/linkToken.ts"
import { DeskApi } from "../../../schemas/desk/api.ts"
import { BadRequest, Conflict, Forbidden, Gone, NotFound, Unauthorized, unavailable } from "../../../schemas/desk/errors.ts"
import { DeskLinkToken, RedeemDeskLink } from "../../../schemas/desk/identity.ts"
import { DeskMember } from "../../../schemas/desk/security.ts"
import { DeskConfig } from "../DeskConfig.ts"
import { issuedUrls, isLinkTokenShaped, linkTokenGoneBody, linkTokenId, linkTokenState, readLinkToken } from "../../platform/identity/linkTokens.ts"
import { factsOf } from "../identity/LinkTokenEntity.ts"
import { rewardTokens } from "../identity/rewardTokens.ts"
import { rewardsBalance } from "../identity/rewards.ts"
import { deskUrls } from "../identity/urls.ts"
import { linkUrl, manifestOf, manifestPage, postedLinkToken } from "../identity/walletLink.ts"
import { publicPageCsp, qrSvg } from "../../platform/webapp/publicPages.ts"

const badToken = new BadRequest({ error: { code: "invalid_parameter", message: "Parameter 'token' is invalid: not a link token." } })
const missingToken = new BadRequest({
  error: { code: "invalid_parameter", message: "Parameter 'token' is missing: give it in the query or inside payload.callback_url." }
})

/** A refusal as the documented error of its status. */
export const refusalOf = (e: LinkRefused) => {
  switch (e.status) {
    case 400:
      return new BadRequest({ error: { code: "invalid_parameter", message: e.message } })
    case 401:
      return new Unauthorized({ error: { code: "invalid_signature", message: e.message } })
    case 403:
      return new Forbidden({ error: { code: "unknown_signer", message: e.message } })
    case 409:
      return new Conflict({ error: { code: "wallet_linked", message: e.message } })
    case 410:
      return new Gone({ error: { code: e.code === "token_expired" ? "token_expired" : "token_used", message: e.message } })
  }
}

const wantsJson = (request: HttpServerRequest.HttpServerRequest) => (request.headers["accept"] ?? "").includes("application/json")

export const WalletLinkHandlers = HttpApiBuilder.group(DeskApi, "walletLink", (handlers) =>
  Effect.gen(function*() {
    const urls = yield* deskUrls
    const tokens = yield* DeskLinkToken.client
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof readLinkToken>>>()
    return handlers
      .handle("manifest", ({ request, urlParams }) =>
        Effect.gen(function*() {
          if (!isLinkTokenShaped(urlParams.token)) return yield* Effect.fail(badToken)
          const row = yield* readLinkToken(linkTokenId(urlParams.token), "desk").pipe(
            Effect.provide(context),
            Effect.mapError(() => unavailable("Link tokens cannot be read right now; please retry."))
          )
          const state = linkTokenState(row, Date.now())
          if (state !== "usable" || Option.isNone(row)) {
            return yield* Effect.fail(linkTokenGoneBody(state === "expired" ? "expired" : "used"))
          }
          const issued = issuedUrls(row.value, urls)
          const manifest = manifestOf(factsOf(row.value), { from: issued.origin, callbackUrl: linkUrl(issued.base, urlParams.token) })
          const headers = { "cache-control": "no-store", vary: "accept" }
          if (wantsJson(request)) return HttpServerResponse.unsafeJson(manifest, { headers })
          const page = manifestPage(manifest, yield* qrSvg(manifest.callback_url))
          return HttpServerResponse.html(page).pipe(HttpServerResponse.setHeaders({
            ...headers, "content-security-policy": publicPageCsp(false), "x-content-type-options": "nosniff", "referrer-policy": "no-referrer"
          }))
        }))
      .handle("link", ({ payload, urlParams }) =>
        Effect.gen(function*() {
          const token = postedLinkToken(urlParams.token, payload.payload.callback_url)
          if (token === undefined) return yield* Effect.fail(missingToken)
          if (!isLinkTokenShaped(token)) return yield* Effect.fail(badToken)
          return yield* tokens(linkTokenId(token)).Redeem(new RedeemDeskLink({ envelope: payload })).pipe(
            Effect.mapError((e) => e._tag === "LinkRefused" ? refusalOf(e) : unavailable("The link could not be processed right now; please retry."))
          )
        }))
  }))

export const RewardsHandlers = HttpApiBuilder.group(DeskApi, "rewards", (handlers) =>
  Effect.gen(function*() {
    const config = yield* DeskConfig
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof rewardsBalance>>>()
    return handlers.handle("balance", ({ urlParams }) =>
      Effect.gen(function*() {
        const member = yield* DeskMember
        const found = yield* Effect.flatMap(rewardTokens(config.deskTokenProperty), (tokens) =>
          rewardsBalance(member.memberId, urlParams.address.trim(), urlParams.days, tokens)).pipe(
          Effect.provide(context),
          Effect.mapError(() => unavailable("Rewards cannot be read right now; please retry."))
        )
        if (Option.isNone(found)) {
          return yield* Effect.fail(new NotFound({ error: { code: "not_found", message: "No wallet linked to this key's member has that address." } }))
        }
        return found.value
      }))
  }))
