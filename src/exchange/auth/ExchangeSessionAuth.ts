// The exchange's session middleware (web app and any program with a session token): the bearer
// token or the sl_exchange_session cookie (src/platform/signin/sessionAuth.ts), in the exchange's
// {code, msg} shape: -2033 for no or a dead session, -2032 for a cookie-session change that may
// come from another site (issue 27.2).
import { Effect, Layer } from "effect"
import { Forbidden, Unauthorized, unavailable } from "../../../schemas/exchange/errors.ts"
import { ExchangeSessionAuth, exchangeSessionCookie } from "../../../schemas/exchange/webApp.ts"
import { sessionVerifier } from "../../platform/signin/sessionAuth.ts"

const makeVerifier = sessionVerifier("exchange", exchangeSessionCookie, {
  unavailable: () => unavailable("Sessions cannot be checked right now; please retry."),
  missing: () => new Unauthorized({ code: -2033, msg: "Sign in first: a session is required (Authorization: Bearer <session token>)." }),
  unknown: () => new Unauthorized({ code: -2033, msg: "The session is unknown, expired or revoked; sign in again." }),
  crossSite: (msg) => new Forbidden({ code: -2032, msg })
})

export const layer = Layer.effect(ExchangeSessionAuth, Effect.map(makeVerifier, (verify) => ({ bearer: () => verify, cookie: () => verify })))
