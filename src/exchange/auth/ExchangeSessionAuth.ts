// The exchange's session middleware (web app and any program with a session token): the bearer
// token or the sl_exchange_session cookie (src/platform/signin/sessionAuth.ts), in the exchange's
// {code, msg} shape: -2033 for no or a dead session, -2032 for a cookie-session change that may
// come from another site (issue 27.2).
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Forbidden, Unauthorized, unavailable } from "../../../schemas/exchange/errors.ts"
import { ExchangeSessionAuth, exchangeSessionCookie } from "../../../schemas/exchange/webApp.ts"
import { challengeBearer } from "../../platform/http/bearer.ts"
import { authenticateSession } from "../../platform/signin/sessionAuth.ts"
import { WebSessions } from "../../platform/signin/WebSessions.ts"

const makeVerifier = Effect.map(WebSessions, (sessions) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const check = yield* authenticateSession("exchange", exchangeSessionCookie).pipe(
      Effect.provideService(WebSessions, sessions),
      Effect.mapError(() => unavailable("Sessions cannot be checked right now; please retry."))
    )
    switch (check._tag) {
      case "Missing":
      case "Unknown":
        challengeBearer(request)
        return yield* Effect.fail(new Unauthorized({
          code: -2033,
          msg: check._tag === "Missing" ? "Sign in first: a session is required (Authorization: Bearer <session token>)." : "The session is unknown, expired or revoked; sign in again."
        }))
      case "CrossSite":
        return yield* Effect.fail(new Forbidden({ code: -2032, msg: check.message }))
      case "Found":
        return check.session
    }
  }))

export const layer = Layer.effect(ExchangeSessionAuth, Effect.map(makeVerifier, (verify) => ({ bearer: () => verify, cookie: () => verify })))
