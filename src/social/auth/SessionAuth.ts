// Social session auth as HttpApi security middleware: the bearer token (or the sl_session cookie),
// checked against the node's session cache (src/platform/signin/sessionAuth.ts); 401
// invalid_session for a missing, unknown, expired or revoked one; 403 cross_site_refused for a
// cookie-session change that may come from another site (issue 27.2).
import { Effect, Layer } from "effect"
import { Forbidden, Unauthorized, unavailable } from "../../../schemas/social/errors.ts"
import { SessionAuth } from "../../../schemas/social/security.ts"
import { sessionVerifier } from "../../platform/signin/sessionAuth.ts"

/** The session cookie browsers send (set by wallet-exchange). */
export const socialSessionCookie = "sl_session"

const refused = (message: string) => new Unauthorized({ error: { code: "invalid_session", message } })

const makeVerifier = sessionVerifier("social", socialSessionCookie, {
  unavailable: () => unavailable("Sessions cannot be checked right now; please retry."),
  missing: () => refused("A session is required: Authorization: Bearer <session token>."),
  unknown: () => refused("The session is unknown, expired or revoked; sign in again."),
  crossSite: (message) => new Forbidden({ error: { code: "cross_site_refused", message } })
})

export const layer = Layer.effect(SessionAuth, Effect.map(makeVerifier, (verify) => ({ bearer: () => verify, cookie: () => verify })))
