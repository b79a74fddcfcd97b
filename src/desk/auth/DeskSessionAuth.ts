// The desk's session middleware (web app and any program with a session token): the bearer token
// or the sl_desk_session cookie (src/platform/signin/sessionAuth.ts), in the desk's error shape:
// 401 invalid_session for no or a dead session, 403 cross_site_refused for a cookie-session change
// that may come from another site (issue 27.2).
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Forbidden, ServiceUnavailable, Unauthorized } from "../../../schemas/desk/errors.ts"
import { DeskSessionAuth, deskSessionCookie } from "../../../schemas/desk/webApp.ts"
import { challengeBearer } from "../../platform/http/bearer.ts"
import { authenticateSession } from "../../platform/signin/sessionAuth.ts"
import { WebSessions } from "../../platform/signin/WebSessions.ts"

const refused = (message: string) => new Unauthorized({ error: { code: "invalid_session", message } })

const makeVerifier = Effect.map(WebSessions, (sessions) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const check = yield* authenticateSession("desk", deskSessionCookie).pipe(
      Effect.provideService(WebSessions, sessions),
      Effect.mapError(() => new ServiceUnavailable({ error: { code: "unavailable", message: "Sessions cannot be checked right now; please retry." } }))
    )
    switch (check._tag) {
      case "Missing":
        challengeBearer(request)
        return yield* Effect.fail(refused("Sign in first: a session is required (Authorization: Bearer <session token>)."))
      case "Unknown":
        challengeBearer(request)
        return yield* Effect.fail(refused("The session is unknown, expired or revoked; sign in again."))
      case "CrossSite":
        return yield* Effect.fail(new Forbidden({ error: { code: "cross_site_refused", message: check.message } }))
      case "Found":
        return check.session
    }
  }))

export const layer = Layer.effect(DeskSessionAuth, Effect.map(makeVerifier, (verify) => ({ session: () => verify, cookie: () => verify })))
