// Desk partner auth (spec: Authentication 2-3) as HttpApi security middleware: the key from
// x-api-key or Authorization: Bearer, its member and scopes from the node's key cache, then the
// route's scope. A refused call was already charged to the client IP by the edge; nothing is
// charged to the key, so knowing a key id cannot lock its member out.
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { Forbidden, Unauthorized, unavailable } from "../../../schemas/desk/errors.ts"
import { DeskKey, DeskKeyCashout, DeskKeyRewards, DeskKeyStables, DeskKeyWrap, type DeskScope } from "../../../schemas/desk/security.ts"
import { challengeBearer, headerOrBearer } from "../../platform/http/bearer.ts"
import { DeskKeys } from "../keys/DeskKeys.ts"
import { scopeRefusal } from "../keys/policy.ts"

const refused = (message: string) => new Unauthorized({ error: { code: "invalid_api_key", message } })

const makeVerifier = (required: DeskScope | undefined) =>
  Effect.map(DeskKeys, (keys) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const apiKey = headerOrBearer(request, "x-api-key")
      if (apiKey === undefined) {
        challengeBearer(request)
        return yield* Effect.fail(refused("An API key is required: x-api-key or Authorization: Bearer <API_KEY>."))
      }
      const found = yield* keys.caller(apiKey).pipe(
        Effect.mapError(() => unavailable("Keys cannot be checked right now; please retry."))
      )
      if (Option.isNone(found)) {
        challengeBearer(request)
        return yield* Effect.fail(refused("Invalid API key."))
      }
      const refusal = scopeRefusal(found.value.scopes, required)
      if (refusal !== undefined) return yield* Effect.fail(new Forbidden({ error: { code: "insufficient_scope", message: refusal } }))
      return found.value
    }))

/** The same check for both schemes (see bearer.ts). */
const both = <V>(verify: V) => ({ apiKey: () => verify, bearer: () => verify })

export const layer = Layer.mergeAll(
  Layer.effect(DeskKey, Effect.map(makeVerifier(undefined), both)),
  Layer.effect(DeskKeyCashout, Effect.map(makeVerifier("cashout"), both)),
  Layer.effect(DeskKeyRewards, Effect.map(makeVerifier("rewards"), both)),
  Layer.effect(DeskKeyStables, Effect.map(makeVerifier("stables"), both)),
  Layer.effect(DeskKeyWrap, Effect.map(makeVerifier("wrap"), both))
)
