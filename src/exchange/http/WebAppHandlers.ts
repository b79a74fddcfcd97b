// The exchange's routes for people (schemas/exchange/webApp.ts): the shared wallet sign-in and the
// session routes in the {code, msg} shape, and the session routes the web app is built on: API
// keys, authorizations (grant, fund, end now), open orders and trades. Every write goes where the
// programs' writes go: ApiKeys for keys, the Authorization entity for grants and their end.
import { isIP } from "node:net"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, Schedule } from "effect"
import type { LinkRefused } from "../../../schemas/common/linkToken.ts"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { Authorization, EndNow, Grant } from "../../../schemas/exchange/authorization.ts"
import { BadRequest, Conflict, Forbidden, Gone, NotFound, ServiceUnavailable, Unauthorized, unavailable } from "../../../schemas/exchange/errors.ts"
import { ExchangeSession } from "../../../schemas/exchange/webApp.ts"
import { formatAmount } from "../../chain/units.ts"
import { ledgerParams } from "../../chain/params.ts"
import { AppConfig } from "../../platform/Config.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import { publicBaseUrl } from "../../platform/http/publicUrl.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { makeSignInFlow } from "../../platform/signin/flow.ts"
import { sessionRoutes, sessionView } from "../../platform/signin/sessionAuth.ts"
import { WebSessions } from "../../platform/signin/WebSessions.ts"
import { AccountReadModel } from "../account/AccountReadModel.ts"
import { keysOf, ownsKey, userOfAddress } from "../account/webUsers.ts"
import { ApiKeys } from "../auth/ApiKeys.ts"
import { newGrantId } from "../authorization/AuthorizationEntity.ts"
import { entityIdOf, parseAsset, parseCap, parseDuration } from "../authorization/policy.ts"
import { decimalToSats } from "../market/amounts.ts"
import { ASSET_DECIMALS } from "../markets/marketSpec.ts"
import { MarketRegistry } from "../markets/MarketRegistry.ts"
import * as Q from "../orders/orderQueries.ts"
import { accountOf } from "./AccountHandlers.ts"
import { myTradeOf, orderOf } from "./orderBodies.ts"

/** Trades the activity view shows. */
export const activityTradesMax = 50

const badParam = (msg: string) => new BadRequest({ code: -1100, msg })

const refusalOf = (e: LinkRefused | { readonly _tag: "SignInUnavailable" }) => {
  if (e._tag !== "LinkRefused") return unavailable()
  switch (e.status) {
    case 400:
      return badParam(e.message)
    case 401:
    case 403:
      return new Unauthorized({ code: -2015, msg: e.message })
    case 409:
      return new Conflict({ code: -2030, msg: e.message })
    case 410:
      return new Gone({ code: -2031, msg: e.message })
  }
}
const goneOr = (e: LinkRefused | { readonly _tag: "SignInUnavailable" }) => {
  const mapped = refusalOf(e)
  return mapped instanceof Gone || mapped instanceof BadRequest ? mapped : unavailable()
}
/** wallet-exchange: from another site's page (login CSRF) -2032, else as goneOr. */
const exchangeRefusal = (e: LinkRefused | { readonly _tag: "SignInUnavailable" }) =>
  e._tag === "LinkRefused" && e.status === 403 ? new Forbidden({ code: -2032, msg: e.message }) : goneOr(e)

/** The exchange listener's public base URL: its own address (the QR callback and the signed origin name it). */
export const exchangeBaseUrl = Effect.map(Effect.all([AppConfig, ExchangeConfig]), ([app, exchange]) =>
  publicBaseUrl(Option.none(), app.httpHost, exchange.httpPort))

export const exchangeSignIn = Effect.map(exchangeBaseUrl, (baseUrl) =>
  makeSignInFlow({
    service: "exchange",
    baseUrl,
    cookiePrefix: "sl_exchange",
    // A wallet the exchange has not seen becomes a user with that registered address.
    onSignedIn: (address) => Effect.orDie(Effect.asVoid(userOfAddress(address)))
  }))

export const ExchangeSignInHandlers = HttpApiBuilder.group(ExchangeApi, "signIn", (handlers) =>
  Effect.gen(function*() {
    const flow = yield* Effect.flatten(exchangeSignIn)
    return handlers
      .handle("challenge", ({ request }) => Effect.mapError(flow.challenge(request), () => unavailable()))
      .handle("status", ({ request, urlParams }) => Effect.mapError(flow.status(request, urlParams.id), goneOr))
      .handle("callbackMessage", ({ urlParams }) => Effect.mapError(flow.callbackMessage(urlParams.id), goneOr))
      .handle("callback", ({ payload }) => Effect.mapError(flow.callback(payload), refusalOf))
      .handle("exchange", ({ payload, request }) => Effect.mapError(flow.exchange(request, payload.token), exchangeRefusal))
  }))

export const ExchangeSessionHandlers = HttpApiBuilder.group(ExchangeApi, "session", (handlers) =>
  Effect.gen(function*() {
    const flow = yield* Effect.flatten(exchangeSignIn)
    const routes = sessionRoutes(flow, yield* Effect.context<SqlClient.SqlClient | WebSessions>(), {
      unavailable: () => unavailable(),
      notFound: () => new NotFound({ code: -1020, msg: "No live session of yours has this id." })
    })
    return handlers
      .handle("session", () => Effect.map(ExchangeSession, sessionView))
      .handle("signOut", ({ request }) => Effect.flatMap(ExchangeSession, (s) => routes.signOut(request, s)))
      .handle("sessions", () => Effect.flatMap(ExchangeSession, routes.list))
      .handle("endSession", ({ path }) => Effect.flatMap(ExchangeSession, (s) => routes.end(s, path.id)))
  }))

const fmt = (sats: bigint) => Either.getOrElse(formatAmount(sats, ASSET_DECIMALS), () => "0")

/**
 * What is still worth sending to a grant's delegated address: the cap, less what trades already
 * spent of it and what the address holds (null: not known yet, so the whole rest). Never below 0.
 */
export const amountToSend = (cap: string, used: string, fundedSats: bigint | undefined): bigint => {
  const rest = decimalToSats(cap) - decimalToSats(used) - (fundedSats ?? 0n)
  return rest < 0n ? 0n : rest
}

export const ExchangeAppHandlers = HttpApiBuilder.group(ExchangeApi, "webApp", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* ApiKeys
    const model = yield* AccountReadModel
    const registry = yield* MarketRegistry
    const view = yield* OmniView
    const grants = yield* Authorization.client
    const db = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.mapError(() => unavailable()))
    const me = Effect.flatMap(ExchangeSession, (s) => db(userOfAddress(s.address)))

    const authorizationsOf = (userId: number) =>
      Effect.gen(function*() {
        const data = yield* model.read(userId)
        const funded = new Map<string, bigint>()
        for (const g of data.grants) {
          const property = registry.propertyOf(g.asset)
          if (property !== undefined) funded.set(g.asset, yield* view.balance(g.delegatedAddress, property))
        }
        const account = accountOf(userId, ["read"], data, Date.now(), (asset) => funded.get(asset))
        return {
          addresses: data.addresses,
          authorizations: account.authorizations.map((a) => {
            const toSend = amountToSend(a.cap, a.used, funded.get(a.asset))
            return {
              ...a,
              funded: funded.has(a.asset) ? fmt(funded.get(a.asset)!) : null,
              toSend: fmt(toSend),
              // Fully funded: the QR names the address and asset only (a wallet asks how much).
              paymentUri: `${ledgerParams.name}:${a.delegatedAddress}?asset=${encodeURIComponent(a.asset)}${toSend > 0n ? `&amount=${fmt(toSend)}` : ""}`
            }
          })
        }
      }).pipe(Effect.mapError(() => unavailable()))

    return handlers
      .handle("keys", () =>
        Effect.gen(function*() {
          const rows = yield* db(keysOf(yield* me))
          return {
            keys: rows.map((r) => ({
              apiKey: r.api_key, scopes: r.scopes as Array<"read" | "trade">, ipAllowlist: [...r.ip_allowlist], label: r.label,
              createdAt: new Date(r.created_at).toISOString()
            }))
          }
        }))
      .handle("createKey", ({ payload }) =>
        Effect.gen(function*() {
          const userId = yield* me
          const bad = (payload.ipAllowlist ?? []).find((ip) => isIP(ip.trim()) === 0)
          if (bad !== undefined) return yield* Effect.fail(badParam(`Parameter 'ipAllowlist' is invalid: "${bad.slice(0, 45)}" is not an IPv4 or IPv6 address.`))
          const scopes = [...new Set(payload.scopes)]
          const ipAllowlist = (payload.ipAllowlist ?? []).map((ip) => ip.trim())
          const label = payload.label?.trim() || undefined
          const created = yield* keys.create({ userId, scopes, ipAllowlist, ...(label === undefined ? {} : { label }) })
          return { apiKey: created.apiKey, secretKey: created.secretKey, scopes, ipAllowlist, label: label ?? null, createdAt: new Date().toISOString() }
        }))
      .handle("revokeKey", ({ path }) =>
        Effect.gen(function*() {
          const userId = yield* me
          const owned = yield* db(ownsKey(userId, path.apiKey))
          if (!owned) return yield* Effect.fail(new NotFound({ code: -1020, msg: "You have no live API key with this id." }))
          yield* keys.revoke(path.apiKey)
          return { apiKey: path.apiKey, revoked: true as const }
        }))
      .handle("authorizations", () => Effect.flatMap(me, authorizationsOf))
      .handle("grant", ({ payload }) =>
        Effect.gen(function*() {
          const userId = yield* me
          const asset = parseAsset(payload.asset.trim().toUpperCase())
          const cap = parseCap(payload.cap.trim())
          const lifetime = parseDuration(payload.expiresIn.trim())
          if (Either.isLeft(asset)) return yield* Effect.fail(badParam(asset.left.message))
          if (Either.isLeft(cap)) return yield* Effect.fail(badParam(cap.left.message))
          if (Either.isLeft(lifetime)) return yield* Effect.fail(badParam(lifetime.left.message))
          const assetCode = asset.right
          if (registry.propertyOf(assetCode) === undefined) return yield* Effect.fail(badParam(`${assetCode} is not traded here: authorize an asset of a listed market.`))
          const grant = new Grant({ grantId: newGrantId(), cap: cap.right, expiresAtMs: Date.now() + lifetime.right })
          yield* grants(entityIdOf(userId, assetCode)).Grant(grant).pipe(
            Effect.catchTag("GrantRefused", (e) => Effect.fail(badParam(`The grant was refused: ${e.message}`))),
            Effect.catchAll((e): Effect.Effect<never, BadRequest | ServiceUnavailable> => (e instanceof BadRequest ? Effect.fail(e) : Effect.fail(unavailable())))
          )
          // The read model learns of the grant by notification; read until it shows (bounded).
          const found = yield* authorizationsOf(userId).pipe(
            Effect.flatMap((list) => Effect.mapError(Option.fromNullable(list.authorizations.find((a) => a.asset === assetCode)), () => unavailable())),
            Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(30)))),
            Effect.catchAll(() => Effect.fail(unavailable()))
          )
          return found
        }))
      .handle("endAuthorization", ({ path }) =>
        Effect.gen(function*() {
          const userId = yield* me
          const asset = path.asset.toUpperCase()
          const ended = yield* grants(entityIdOf(userId, asset)).EndNow(new EndNow({ requestId: newGrantId() })).pipe(Effect.mapError(() => unavailable()))
          if (ended.grantId === null) return yield* Effect.fail(new NotFound({ code: -1020, msg: `You have no live authorization for ${asset}.` }))
          return { asset, grantId: ended.grantId }
        }))
      .handle("activity", () =>
        Effect.gen(function*() {
          const userId = yield* me
          const open = yield* db(Q.openOrders(userId, undefined))
          const { legs, trades } = yield* db(Q.myTrades(userId, undefined, undefined, { limit: activityTradesMax }))
          const marketOf = (id: string) => registry.ofId(Number(id))
          return {
            openOrders: open.flatMap((r) => (marketOf(r.order_id) === undefined ? [] : [orderOf(marketOf(r.order_id)!, r)])),
            trades: trades.flatMap((t) => (marketOf(t.trade_id) === undefined ? [] : [myTradeOf(marketOf(t.trade_id)!, userId, t, legs)]))
          }
        }))
  }))
