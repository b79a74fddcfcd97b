// The social network's HTTP service, ready for a listener (http/SocialListener.ts serves it): the
// API with its handlers and session middleware, and its edge.
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either, Layer, Option } from "effect"
import { NotFound, unavailable } from "../../../schemas/social/errors.ts"
import { SocialApi } from "../../../schemas/social/api.ts"
import { Session } from "../../../schemas/social/security.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { ledgerKind } from "../../platform/ChainsLive.ts"
import { AppConfig } from "../../platform/Config.ts"
import { errorShapeEdge } from "../../platform/http/errorBodyEdge.ts"
import * as OpenCors from "../../platform/http/openCors.ts"
import * as SessionAuth from "../auth/SessionAuth.ts"
import { SignInHandlers, SocialLinkHandlers, socialSignIn } from "./SignInHandlers.ts"
import { sessionRoutes, sessionView } from "../../platform/signin/sessionAuth.ts"
import { WebSessions } from "../../platform/signin/WebSessions.ts"
import { SqlClient } from "@effect/sql"
import { fileURLToPath } from "node:url"
import { webAppRoutes } from "../../platform/webapp/WebApp.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { systemWallet } from "../../platform/ledger/SystemWallet.ts"
import { formatAmount } from "../../chain/units.ts"
import { contentHandlers, uploadRoute } from "./ContentHttp.ts"
import { MemberSignedHandlers, StampSigningHandlers } from "./MemberSignedHttp.ts"
import { topUpWalletName } from "../accounts/TopUps.ts"
import { readMe } from "../accounts/me.ts"
import { issueSocialLinkToken } from "../identity/issueLinkToken.ts"
import { linkDeepLink, linkStatusOf, linkTokenOfSubject } from "../../platform/identity/linkTokens.ts"
import { POLL_INTERVAL_MS } from "../../platform/signin/challenge.ts"
import { lookupCache } from "./LookupCache.ts"
import { fastStream } from "./fastStream.ts"
import type { ContentStoreShape } from "../content/ContentStore.ts"


/** API bodies (verify-message, wallet-link, sign-in) are small; media goes through upload pages. */
export const socialBodyBytesMax = 64 * 1024

export const socialEdge = (ipWeightPerMin: number, contentBytesMax: number, store: ContentStoreShape) =>
  errorShapeEdge({
    service: "social", api: SocialApi, ipWeightPerMin, bodyBytesMax: socialBodyBytesMax,
    // Post lookups answered by the edge from what the handler last answered (LookupCache.ts).
    fastCached: lookupCache.get,
    // Hot media ranges from verified chunks in memory (fastStream.ts).
    fastRaw: fastStream(store),
    // Uploads stream into the content store, which enforces the same limit on bodies without a length.
    bodyBytesMaxByRoute: new Map([[uploadRoute, contentBytesMax]])
  })

const HealthHandlers = HttpApiBuilder.group(SocialApi, "health", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const kind = ledgerKind(yield* AppConfig)
    const sponsor = yield* FeeSponsor
    const topUp = yield* systemWallet(topUpWalletName).pipe(Effect.orDie)
    return handlers.handle("health", () =>
      ledger.tip.pipe(
        Effect.zip(sponsor.latest),
        Effect.map(([tip, hot]) => ({
          chain: ledger.params.name, height: tip.height, tipHash: tip.hash, kind,
          hotWallet: { address: hot.address, balance: hot.sats === null ? null : Either.getOrElse(formatAmount(BigInt(hot.sats), 8), () => null) },
          topUpAddress: topUp.address
        })),
        Effect.mapError(() => unavailable("The ledger node did not answer."))
      ))
  }))

const sessionsUnavailable = () => unavailable("Sessions cannot be changed right now; please retry.")

const SessionHandlers = HttpApiBuilder.group(SocialApi, "session", (handlers) =>
  Effect.gen(function*() {
    const flow = yield* Effect.flatten(socialSignIn)
    const routes = sessionRoutes(flow, yield* Effect.context<SqlClient.SqlClient | WebSessions>(), {
      unavailable: sessionsUnavailable,
      notFound: () => new NotFound({ error: { code: "not_found", message: "No live session of yours has this id." } })
    })
    return handlers
      .handle("session", () => Effect.map(Session, sessionView))
      .handle("signOut", ({ request }) => Effect.flatMap(Session, (s) => routes.signOut(request, s)))
      .handle("sessions", () => Effect.flatMap(Session, routes.list))
      .handle("endSession", ({ path }) => Effect.flatMap(Session, (s) => routes.end(s, path.id)))
  }))

const MeHandlers = HttpApiBuilder.group(SocialApi, "me", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const topUp = yield* systemWallet(topUpWalletName).pipe(Effect.orDie)
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof issueSocialLinkToken>>>()
    return handlers
      .handle("me", () =>
        Effect.flatMap(Session, (s) => readMe(s.address, topUp.address)).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.mapError(() => unavailable("Your account cannot be read right now; please retry."))
        ))
      .handle("linkQr", () =>
        Effect.flatMap(Session, (s) => issueSocialLinkToken(s.address)).pipe(
          Effect.provide(context),
          Effect.map((issued) => ({ challengeId: issued.challengeId, url: issued.url, deepLink: linkDeepLink(issued.url), expiresAt: issued.expiresAt, pollIntervalMs: POLL_INTERVAL_MS })),
          Effect.mapError(() => unavailable("A wallet-link code cannot be made right now; please retry."))
        ))
      .handle("linkState", ({ path }) =>
        Effect.gen(function*() {
          const s = yield* Session
          const found = yield* linkTokenOfSubject("social", s.address, path.challengeId).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.mapError(() => unavailable("The wallet-link code cannot be read right now; please retry."))
          )
          if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: { code: "not_found", message: "No wallet-link code of yours has this id." } }))
          const expiresAt = new Date(found.value.expires_at)
          return { challengeId: path.challengeId, status: linkStatusOf(found.value.status, expiresAt, Date.now()), expiresAt: expiresAt.toISOString() }
        }))
  }))

/** The web app at /app/ (src/social/web/app.js) and /favicon.ico. */
export const socialWebApp = webAppRoutes({ title: "Social", entry: fileURLToPath(new URL("../web/app.js", import.meta.url)) })

export const socialHandlers = HttpApiBuilder.api(SocialApi).pipe(
  Layer.provide([HealthHandlers, SessionHandlers, MeHandlers, SignInHandlers, SocialLinkHandlers, ...contentHandlers, MemberSignedHandlers, StampSigningHandlers]),
  Layer.provide([SessionAuth.layer, OpenCors.layer])
)
