// The token desk's HTTP service, ready for a listener (cluster/Listeners.ts composes it): the API
// with its handlers and auth middleware, its edge, and how a request that does not decode is
// answered (400 invalid_parameter, src/platform/http/errorBodyEdge.ts).
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { DeskApi } from "../../../schemas/desk/api.ts"
import { DeskMember } from "../../../schemas/desk/security.ts"
import { errorShapeEdge } from "../../platform/http/errorBodyEdge.ts"
import { OpenCorsLive } from "../../platform/http/openCors.ts"
import { DeskKeyAuthLive } from "../auth/DeskKeyAuth.ts"
import { CallbackHandlers } from "../callbacks/CallbackHandlers.ts"
import { CashoutHandlers, OrderPollHandlers, StablesHandlers, StablesPublicHandlers, WrapHandlers, WrapPublicHandlers } from "../cashout/CashoutHandlers.ts"
import { WebhookHandlers } from "../webhooks/WebhookHandlers.ts"
import { deskStatus } from "./statusBody.ts"
import { RewardsHandlers, WalletLinkHandlers } from "./WalletLinkHandlers.ts"

/** Partner bodies (orders, wallet-link envelopes) are a few hundred bytes. */
export const deskBodyBytesMax = 32 * 1024

export const deskEdge = (ipWeightPerMin: number) =>
  errorShapeEdge({ service: "desk", api: DeskApi, ipWeightPerMin, bodyBytesMax: deskBodyBytesMax })

const TransparencyHandlers = HttpApiBuilder.group(DeskApi, "transparency", (handlers) =>
  handlers.handle("status", () => Effect.sync(() => deskStatus(Date.now()))))

const KeyHandlers = HttpApiBuilder.group(DeskApi, "key", (handlers) =>
  handlers.handle("key", () =>
    Effect.map(DeskMember, (m) => ({ memberId: m.memberId, scopes: m.scopes, feeBps: m.feeBps, callbackUrl: m.callbackUrl }))))

export const deskHandlers = HttpApiBuilder.api(DeskApi).pipe(
  Layer.provide([TransparencyHandlers, KeyHandlers, WalletLinkHandlers, RewardsHandlers, CallbackHandlers, WebhookHandlers, CashoutHandlers, OrderPollHandlers, StablesPublicHandlers, StablesHandlers, WrapPublicHandlers, WrapHandlers]),
  Layer.provide([DeskKeyAuthLive, OpenCorsLive])
)
