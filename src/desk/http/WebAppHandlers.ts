// The desk's routes for people (schemas/desk/webApp.ts): the shared wallet sign-in and the session
// routes in the desk's error shape, and the session routes the web app is built on. Each does what
// the partner routes do, with the same code: keys in desk_api_keys (DeskKeyStore), the QR from
// issueDeskLinkToken (the DeskLinkToken entity), rewards from the LinkedWallet's samples, orders
// and the account as the cash-out routes show them. The member is the session's wallet address's
// (memberAccounts.ts).
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import type { LinkRefused } from "../../../schemas/common/linkToken.ts"
import { DeskApi } from "../../../schemas/desk/api.ts"
import { BadRequest, Conflict, Forbidden, Gone, NotFound, Unauthorized, unavailable } from "../../../schemas/desk/errors.ts"
import { DeskSession } from "../../../schemas/desk/webApp.ts"
import type { DeskCaller } from "../../../schemas/desk/security.ts"
import { AppConfig } from "../../platform/Config.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { POLL_INTERVAL_MS } from "../../platform/signin/challenge.ts"
import { makeSignInFlow, type SignInUnavailable } from "../../platform/signin/flow.ts"
import { sessionRoutes, sessionView } from "../../platform/signin/sessionAuth.ts"
import { WebSessions } from "../../platform/signin/WebSessions.ts"
import { accountView, cashoutToken, memberAccount, savePayoutAddress } from "../cashout/account.ts"
import { orderServices } from "../cashout/CashoutHandlers.ts"
import { evmAddressInput, memberFeeBps } from "../cashout/policy.ts"
import { issueDeskLinkToken } from "../identity/issueLinkToken.ts"
import { ensureMemberOf } from "../identity/memberAccounts.ts"
import { rewardTokens } from "../identity/rewardTokens.ts"
import { rewardsBalance, windowSamples } from "../identity/rewards.ts"
import { deskUrls } from "../identity/urls.ts"
import { DeskConfig } from "../DeskConfig.ts"
import { linkDeepLink, linkStatusOf, linkTokenOfSubject } from "../../platform/identity/linkTokens.ts"
import { createKeyFor, memberKeys, revokeMemberKey } from "../keys/DeskKeyStore.ts"
import { DeskKeys } from "../keys/DeskKeys.ts"
import { checkCallbackUrl } from "../keys/policy.ts"
import { memberOrders, orderTrail } from "../orders/orderStore.ts"

/** The desk's records (members, orders, tokens) did not answer. */
const recordsUnavailable = () => unavailable("The desk's records are unavailable right now; please retry.")
const badParameter = (message: string) => new BadRequest({ error: { code: "invalid_parameter", message } })
const notFound = (message: string) => new NotFound({ error: { code: "not_found", message } })

/** A sign-in refusal as the desk's error of its status. */
const signInRefusal = (e: LinkRefused | SignInUnavailable) => {
  if (e._tag !== "LinkRefused") return unavailable("Sign-in cannot be processed right now; please retry.")
  switch (e.status) {
    case 400:
      return badParameter(e.message)
    case 401:
    case 403:
      return new Unauthorized({ error: { code: "invalid_signature", message: e.message } })
    case 409:
      return new Conflict({ error: { code: "already_signed", message: e.message } })
    case 410:
      return new Gone({ error: { code: e.code === "token_expired" ? "token_expired" : "token_used", message: e.message } })
  }
}
/** For steps whose only refusals are 400 and 410 (a status poll, the message, an exchange). */
const goneOr = (e: LinkRefused | SignInUnavailable) => {
  const mapped = signInRefusal(e)
  return mapped instanceof Gone || mapped instanceof BadRequest ? mapped : unavailable("Sign-in cannot be processed right now; please retry.")
}
/** wallet-exchange: from another site's page (login CSRF) 403 cross_site_refused, else as goneOr. */
const exchangeRefusal = (e: LinkRefused | SignInUnavailable) =>
  e._tag === "LinkRefused" && e.status === 403 ? new Forbidden({ error: { code: "cross_site_refused", message: e.message } }) : goneOr(e)

/** The desk's site in the shared sign-in: a wallet without an account gets a member by signing in. */
export const deskSignIn = Effect.map(deskUrls, (urls) =>
  makeSignInFlow({ service: "desk", baseUrl: urls.base, cookiePrefix: "sl_desk", onSignedIn: (address) => Effect.orDie(Effect.asVoid(ensureMemberOf(address))) }))

export const DeskSignInHandlers = HttpApiBuilder.group(DeskApi, "signIn", (handlers) =>
  Effect.gen(function*() {
    const flow = yield* Effect.flatten(deskSignIn)
    return handlers
      .handle("challenge", ({ request }) => Effect.mapError(flow.challenge(request), () => unavailable("Sign-in cannot be processed right now; please retry.")))
      .handle("status", ({ request, urlParams }) => Effect.mapError(flow.status(request, urlParams.id), goneOr))
      .handle("callbackMessage", ({ urlParams }) => Effect.mapError(flow.callbackMessage(urlParams.id), goneOr))
      .handle("callback", ({ payload }) => Effect.mapError(flow.callback(payload), signInRefusal))
      .handle("exchange", ({ payload, request }) => Effect.mapError(flow.exchange(request, payload.token), exchangeRefusal))
  }))

export const DeskSessionHandlers = HttpApiBuilder.group(DeskApi, "session", (handlers) =>
  Effect.gen(function*() {
    const flow = yield* Effect.flatten(deskSignIn)
    const routes = sessionRoutes(flow, yield* Effect.context<SqlClient.SqlClient | WebSessions>(), {
      unavailable: () => unavailable("Sessions cannot be changed right now; please retry."),
      notFound: () => notFound("No live session of yours has this id.")
    })
    return handlers
      .handle("session", () => Effect.map(DeskSession, sessionView))
      .handle("signOut", ({ request }) => Effect.flatMap(DeskSession, (s) => routes.signOut(request, s)))
      .handle("sessions", () => Effect.flatMap(DeskSession, routes.list))
      .handle("endSession", ({ path }) => Effect.flatMap(DeskSession, (s) => routes.end(s, path.id)))
  }))

interface WalletRow {
  readonly signing_address: string
  readonly evm_address: string
  readonly base_address: string
  readonly wallet: string
  readonly linked_at: Date
}
type Member = Pick<DeskCaller, "memberId" | "feeBps">
type Needs = SqlClient.SqlClient | AppConfig | DeskConfig | OmniView | SecretBox | Effect.Effect.Context<ReturnType<typeof issueDeskLinkToken>>

const walletView = (w: WalletRow) => ({
  signingAddress: w.signing_address, evmAddress: w.evm_address, baseAddress: w.base_address, wallet: w.wallet, linkedAt: new Date(w.linked_at).toISOString()
})

export const DeskAppHandlers = HttpApiBuilder.group(DeskApi, "webApp", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* DeskConfig
    const keys = yield* DeskKeys
    const orders = yield* orderServices
    const context = yield* Effect.context<Needs>()
    const db = <A, E, R extends Needs>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(Effect.provide(context), Effect.tapErrorCause((c) => Effect.logWarning("desk web app: unavailable", c)), Effect.mapError(recordsUnavailable))
    /** The session's member: its id and negotiated fee. */
    const me = Effect.flatMap(DeskSession, (s) => db(ensureMemberOf(s.address))).pipe(
      Effect.map((m): Member => ({ memberId: m.id, feeBps: m.fee_bps }))
    )
    const linkedWallet = (memberId: string) =>
      db(sql<WalletRow>`SELECT signing_address, evm_address, base_address, wallet, linked_at FROM desk_wallets WHERE member_id = ${memberId}`).pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])))
    const account = (member: Member) => Effect.map(orders.provide(memberAccount(member)), accountView).pipe(Effect.mapError(recordsUnavailable))

    return handlers
      .handle("account", () =>
        Effect.gen(function*() {
          const session = yield* DeskSession
          const member = yield* me
          const wallet = yield* linkedWallet(member.memberId)
          return { memberId: member.memberId, address: session.address, wallet: Option.getOrNull(Option.map(wallet, walletView)), payout: yield* account(member) }
        }))
      .handle("savePayoutAddress", ({ payload }) =>
        Effect.gen(function*() {
          const member = yield* me
          const address = evmAddressInput("payoutAddress", payload.payoutAddress)
          if (Either.isLeft(address)) return yield* Effect.fail(badParameter(address.left))
          yield* db(savePayoutAddress(member.memberId, address.right))
          return yield* account(member)
        }))
      .handle("keys", () =>
        Effect.gen(function*() {
          const member = yield* me
          const fee = memberFeeBps(yield* orders.provide(cashoutToken).pipe(Effect.mapError(recordsUnavailable)), member.feeBps)
          const rows = yield* db(memberKeys(member.memberId))
          return {
            keys: rows.map((r) => ({
              id: r.id, scopes: r.scopes as ReadonlyArray<DeskCaller["scopes"][number]>, callbackUrl: r.callback_url, feeBps: fee, createdAt: new Date(r.created_at).toISOString()
            }))
          }
        }))
      .handle("createKey", ({ payload }) =>
        Effect.gen(function*() {
          const member = yield* me
          const url = payload.callbackUrl === undefined || payload.callbackUrl.trim() === ""
            ? Either.right(undefined)
            : checkCallbackUrl(payload.callbackUrl.trim(), config.callbackAllowHttp, "callbackUrl")
          if (Either.isLeft(url)) return yield* Effect.fail(badParameter(url.left))
          const scopes = [...new Set(payload.scopes)]
          const created = yield* db(createKeyFor(member.memberId, { scopes, callbackUrl: url.right }))
          const fee = memberFeeBps(yield* orders.provide(cashoutToken).pipe(Effect.mapError(recordsUnavailable)), member.feeBps)
          return {
            id: created.id, scopes, callbackUrl: url.right ?? null, feeBps: fee, createdAt: created.createdAt.toISOString(),
            apiKey: created.apiKey, signingSecret: created.signingSecret
          }
        }))
      .handle("revokeKey", ({ path }) =>
        Effect.gen(function*() {
          const member = yield* me
          const revoked = yield* db(revokeMemberKey(member.memberId, path.id))
          if (Option.isNone(revoked)) return yield* Effect.fail(notFound("You have no live partner key with this id."))
          keys.forget(revoked.value)
          return { id: path.id, revoked: true as const }
        }))
      .handle("linkQr", ({ payload }) =>
        Effect.gen(function*() {
          const member = yield* me
          const allowRebind = payload.replace === true
          const issued = yield* db(issueDeskLinkToken({ memberId: member.memberId, allowRebind }))
          return { challengeId: issued.challengeId, url: issued.url, deepLink: linkDeepLink(issued.url), expiresAt: issued.expiresAt, allowRebind, pollIntervalMs: POLL_INTERVAL_MS }
        }))
      .handle("linkState", ({ path }) =>
        Effect.gen(function*() {
          const member = yield* me
          const found = yield* db(linkTokenOfSubject("desk", member.memberId, path.challengeId))
          if (Option.isNone(found)) return yield* Effect.fail(notFound("No wallet-link QR of yours has this id."))
          const row = found.value
          const status = linkStatusOf(row.status, new Date(row.expires_at), Date.now())
          const wallet = status === "linked" ? Option.getOrNull(Option.map(yield* linkedWallet(member.memberId), walletView)) : null
          return { challengeId: path.challengeId, status, expiresAt: new Date(row.expires_at).toISOString(), wallet }
        }))
      .handle("rewards", ({ urlParams }) =>
        Effect.gen(function*() {
          const member = yield* me
          const wallet = yield* linkedWallet(member.memberId)
          if (Option.isNone(wallet)) return yield* Effect.fail(notFound("No wallet is linked to your account yet: link one with its QR code."))
          const balance = yield* db(Effect.flatMap(rewardTokens(config.deskTokenProperty), (tokens) =>
            rewardsBalance(member.memberId, wallet.value.signing_address, urlParams.days, tokens)))
          if (Option.isNone(balance)) return yield* Effect.fail(notFound("No wallet is linked to your account yet: link one with its QR code."))
          const samples = yield* db(windowSamples(member.memberId, urlParams.days))
          return { ...balance.value, intervalMs: config.rewardsSampleMs, samples }
        }))
      .handle("orders", () =>
        Effect.gen(function*() {
          const member = yield* me
          const rows = yield* db(memberOrders(member.memberId))
          const trail = yield* db(orderTrail(rows.map((r) => r.id)))
          const list = []
          for (const row of rows) {
            const view = yield* orders.viewOf(row).pipe(Effect.mapError(recordsUnavailable))
            const events = trail.events.filter((e) => e.order_id === row.id).map((e) => ({
              at: new Date(e.at).toISOString(), event: e.event, source: e.source,
              status: typeof e.body.status === "string" ? e.body.status : null,
              txid: typeof e.body.txid === "string" && e.body.txid !== "" ? e.body.txid : null
            }))
            // Orders record their own "created" event; one written before that did not is given it.
            const created = { at: new Date(row.created_at).toISOString(), event: "created", source: "desk", status: null, txid: null }
            list.push({
              ...view,
              history: events.some((e) => e.event === "created") ? events : [created, ...events],
              legs: trail.legs.filter((l) => l.order_id === row.id).map((l) => ({ leg: l.leg, chain: l.chain, txid: l.txid, recordedAt: new Date(l.recorded_at).toISOString() }))
            })
          }
          return { orders: list }
        }))
  }))
