// Who a request's session is, for a service's session middleware: the bearer token (programs) or
// the service's session cookie (browsers), looked up in the node's session cache. A cookie session
// also passes the cross-site check on state changes (csrf.ts); a bearer one cannot be sent by
// another site's page, so it needs none. The service turns each outcome into its own error body.
import { HttpServerRequest } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { type Context, Effect, Option } from "effect"
import { bearerOf, challengeBearer } from "../http/bearer.ts"
import { csrfRefusal, csrfTokenOf } from "./csrf.ts"
import { isSessionId, listSessions, revokeSessionById, sessionIdOf, type WebSession } from "./sessionStore.ts"
import { WebSessions } from "./WebSessions.ts"

export type SessionCheck =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "CrossSite"; readonly message: string }
  | { readonly _tag: "Found"; readonly session: WebSession }

export const authenticateSession = (service: string, cookieName: string, options: { readonly allowMultipart?: boolean } = {}) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const sessions = yield* WebSessions
    const bearer = bearerOf(request)
    const token = bearer ?? request.cookies[cookieName]
    if (token === undefined) return { _tag: "Missing" } as SessionCheck
    const found = yield* sessions.session(service, token, Date.now())
    if (Option.isNone(found)) return { _tag: "Unknown" } as SessionCheck
    if (bearer === undefined) {
      const refusal = csrfRefusal({ method: request.method, headers: request.headers, tokenHash: found.value.tokenHash, ...options })
      if (refusal !== undefined) return { _tag: "CrossSite", message: refusal } as SessionCheck
    }
    return { _tag: "Found", session: found.value } as SessionCheck
  })

/** How a service answers each way a session check can fail, in its own error shape. */
export interface SessionRefusals<U, A, C> {
  /** The session cache did not answer. */
  readonly unavailable: () => U
  /** No token (401; the reply names the Bearer scheme). */
  readonly missing: () => A
  /** A token of no live session (401, likewise). */
  readonly unknown: () => A
  /** A cookie-session change that may come from another site (403). */
  readonly crossSite: (message: string) => C
}

/**
 * A service's session verifier, for its HttpApi security middleware (one verifier serves the
 * bearer and the cookie scheme: HttpApi tries them in turn, so each reads both, bearer.ts): the
 * session found, or the refusal the service names for the outcome.
 */
export const sessionVerifier = <U, A, C>(service: string, cookieName: string, refusals: SessionRefusals<U, A, C>) =>
  Effect.map(WebSessions, (sessions) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const check = yield* authenticateSession(service, cookieName).pipe(
        Effect.provideService(WebSessions, sessions),
        Effect.mapError(refusals.unavailable)
      )
      switch (check._tag) {
        case "Missing":
          challengeBearer(request)
          return yield* Effect.fail(refusals.missing())
        case "Unknown":
          challengeBearer(request)
          return yield* Effect.fail(refusals.unknown())
        case "CrossSite":
          return yield* Effect.fail(refusals.crossSite(check.message))
        case "Found":
          return check.session
      }
    }))

/** GET session: who, until when, and the CSRF token a page may send. */
export const sessionView = (s: WebSession) => ({ address: s.address, expiresAt: s.expiresAt.toISOString(), csrfToken: csrfTokenOf(s.tokenHash) })

/** The address's live sessions on this service, the request's own marked. */
export const sessionList = (s: WebSession) =>
  Effect.map(listSessions(s.service, s.address), (rows) => ({
    sessions: rows.map((r) => ({
      id: sessionIdOf(r.token_hash),
      createdAt: new Date(r.created_at).toISOString(),
      expiresAt: new Date(r.expires_at).toISOString(),
      current: r.token_hash === s.tokenHash
    }))
  }))

/** Ends one of the address's sessions by id; false when the id names none of its live ones. */
export const endSession = (s: WebSession, id: string) =>
  Effect.gen(function*() {
    if (!isSessionId(id)) return false
    const sessions = yield* WebSessions
    const ended = yield* revokeSessionById(s.service, s.address, id)
    for (const hash of ended) sessions.forget(hash)
    return ended.length > 0
  })

/**
 * The session routes' work (sign out, list one's sessions, end one), shared by every service's
 * session group: each failure in the service's shape, `unavailable` when the session store did
 * not answer and `notFound` for an id that names none of the caller's live sessions.
 */
export const sessionRoutes = <U, N>(
  flow: { readonly signOut: (request: HttpServerRequest.HttpServerRequest, session: WebSession) => Effect.Effect<boolean, unknown> },
  context: Context.Context<SqlClient.SqlClient | WebSessions>,
  refusals: { readonly unavailable: () => U; readonly notFound: () => N }
) => ({
  signOut: (request: HttpServerRequest.HttpServerRequest, s: WebSession) =>
    flow.signOut(request, s).pipe(Effect.map((ended) => ({ id: sessionIdOf(s.tokenHash), ended })), Effect.mapError(refusals.unavailable)),
  list: (s: WebSession) => sessionList(s).pipe(Effect.provide(context), Effect.mapError(refusals.unavailable)),
  end: (s: WebSession, id: string) =>
    endSession(s, id).pipe(
      Effect.provide(context),
      Effect.mapError(refusals.unavailable),
      Effect.filterOrFail((ended) => ended, refusals.notFound),
      Effect.as({ id, ended: true })
    )
})
