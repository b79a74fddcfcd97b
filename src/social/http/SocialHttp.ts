// The social network's HTTP service, ready for a listener (cluster/Listeners.ts composes it): the
// API with its handlers and session middleware, and its edge.
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { ServiceUnavailable } from "../../../schemas/social/errors.ts"
import { SocialApi } from "../../../schemas/social/api.ts"
import { Session } from "../../../schemas/social/security.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { ledgerKind } from "../../platform/ChainsLive.ts"
import { AppConfig } from "../../platform/Config.ts"
import { errorShapeEdge } from "../../platform/http/errorBodyEdge.ts"
import { OpenCorsLive } from "../../platform/http/openCors.ts"
import { SessionAuthLive } from "../auth/SessionAuth.ts"
import { SignInHandlers, SocialLinkHandlers } from "./SignInHandlers.ts"

/** API bodies (verify-message, wallet-link, sign-in) are small; media goes through upload pages. */
export const socialBodyBytesMax = 64 * 1024

export const socialEdge = (ipWeightPerMin: number) =>
  errorShapeEdge({ service: "social", api: SocialApi, ipWeightPerMin, bodyBytesMax: socialBodyBytesMax })

const HealthHandlers = HttpApiBuilder.group(SocialApi, "health", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const kind = ledgerKind(yield* AppConfig)
    return handlers.handle("health", () =>
      ledger.tip.pipe(
        Effect.map((tip) => ({ chain: ledger.params.name, height: tip.height, tipHash: tip.hash, kind })),
        Effect.mapError(() => new ServiceUnavailable({ error: { code: "unavailable", message: "The ledger node did not answer." } }))
      ))
  }))

const SessionHandlers = HttpApiBuilder.group(SocialApi, "session", (handlers) =>
  handlers.handle("session", () => Effect.map(Session, (s) => ({ address: s.address, expiresAt: s.expiresAt.toISOString() }))))

export const socialHandlers = HttpApiBuilder.api(SocialApi).pipe(
  Layer.provide([HealthHandlers, SessionHandlers, SignInHandlers, SocialLinkHandlers]),
  Layer.provide([SessionAuthLive, OpenCorsLive])
)
