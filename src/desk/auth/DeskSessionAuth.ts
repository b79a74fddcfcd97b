// The desk's session middleware (web app and any program with a session token): the bearer token
// or the sl_desk_session cookie (src/platform/signin/sessionAuth.ts), in the desk's error shape:
// 401 invalid_session for no or a dead session, 403 cross_site_refused for a cookie-session change
// that may come from another site (issue 27.2).
import { Effect, Layer } from "effect"
import { Forbidden, ServiceUnavailable, Unauthorized } from "../../../schemas/desk/errors.ts"
import { DeskSessionAuth, deskSessionCookie } from "../../../schemas/desk/webApp.ts"
import { sessionVerifier } from "../../platform/signin/sessionAuth.ts"

const refused = (message: string) => new Unauthorized({ error: { code: "invalid_session", message } })

const makeVerifier = sessionVerifier("desk", deskSessionCookie, {
  unavailable: () => new ServiceUnavailable({ error: { code: "unavailable", message: "Sessions cannot be checked right now; please retry." } }),
  missing: () => refused("Sign in first: a session is required (Authorization: Bearer <session token>)."),
  unknown: () => refused("The session is unknown, expired or revoked; sign in again."),
  crossSite: (message) => new Forbidden({ error: { code: "cross_site_refused", message } })
})

export const layer = Layer.effect(DeskSessionAuth, Effect.map(makeVerifier, (verify) => ({ session: () => verify, cookie: () => verify })))
