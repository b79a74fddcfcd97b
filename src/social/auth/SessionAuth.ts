// Social session auth as HttpApi security middleware: the bearer token (or the sl_session cookie), checked against the
// node's session cache; 401 invalid_session for a missing, unknown, expired or revoked one.
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { ServiceUnavailable, Unauthorized } from "../../../schemas/social/errors.ts"
import { SessionAuth } from "../../../schemas/social/security.ts"
import { bearerOf, challengeBearer } from "../../platform/http/bearer.ts"
import { Sessions } from "../sessions/Sessions.ts"

const refused = (message: string) => new Unauthorized({ error: { code: "invalid_session", message } })

/** The session cookie browsers send (set by wallet-exchange). */
const sessionCookie = "sl_session"

const makeVerifier = Effect.map(Sessions, (sessions) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      // Either scheme: HttpApi tries them in turn, so each reads both (bearer.ts).
      const token = bearerOf(request) ?? request.cookies[sessionCookie]
      if (token === undefined) {
        challengeBearer(request)
        return yield* Effect.fail(refused("A session is required: Authorization: Bearer <session token>."))
      }
      const found = yield* sessions.session(token, Date.now()).pipe(
        Effect.mapError(() => new ServiceUnavailable({ error: { code: "unavailable", message: "Sessions cannot be checked right now; please retry." } }))
      )
      if (Option.isNone(found)) {
        challengeBearer(request)
        return yield* Effect.fail(refused("The session is unknown, expired or revoked; sign in again."))
      }
      return found.value
    }))

export const SessionAuthLive = Layer.effect(SessionAuth, Effect.map(makeVerifier, (verify) => ({ bearer: () => verify, cookie: () => verify })))
