// How a Post or Continuity entity's answer becomes the social API's error: the one place that maps
// a refusal's code to its status, and that turns anything else (the entity unreachable, a
// timeout, the database) into 503.
import { BadRequest, ContentConflict, Forbidden, IdempotencyKeyReused, idempotencyKeyReused, NotFound, PaymentRequired, ServiceUnavailable, unavailable } from "../../../schemas/social/errors.ts"
import type { ContinuityRefused } from "../../../schemas/social/continuity.ts"
import type { PostRefused } from "../../../schemas/social/post.ts"
import { Effect } from "effect"

/** A refusal from the Post or Continuity entity as the API's error. */
export const refusal = (e: PostRefused | ContinuityRefused) => {
  switch (e.code) {
    case "insufficient_balance": return new PaymentRequired({ error: { code: "insufficient_balance", message: e.message } })
    case "no_service_key": case "media_blocked": return new Forbidden({ error: { code: e.code, message: e.message } })
    case "post_closed": case "countdown_exists": case "no_countdown": case "signature_pending": case "nothing_to_sign": case "signatures_expired": return new ContentConflict({ error: { code: e.code, message: e.message } })
    case "not_found": case "unknown_media": case "unknown_account": return new NotFound({ error: { code: "not_found", message: e.message } })
    case "invalid_parameter": return new BadRequest({ error: { code: "invalid_parameter", message: e.message } })
    // The Post entity claims a publish's Idempotency-Key (posts/idempotency.ts).
    case "idempotency_key_reused": return idempotencyKeyReused()
    // The database, the ledger or the fee sponsor did not answer (the entity logged it): retry.
    default: return unavailable()
  }
}

type ApiRefusal = PaymentRequired | Forbidden | ContentConflict | NotFound | BadRequest | IdempotencyKeyReused
type ApiRefusalClass = typeof PaymentRequired | typeof Forbidden | typeof ContentConflict | typeof NotFound | typeof BadRequest | typeof IdempotencyKeyReused

const isEntityRefusal = (e: unknown): e is PostRefused | ContinuityRefused =>
  typeof e === "object" && e !== null && ["PostRefused", "ContinuityRefused"].includes((e as { _tag?: unknown })._tag as string)

/**
 * A call to the entity as the route answers it: a refusal becomes its API error, and of the API's
 * errors only those the route documents (`answers`) pass; everything else is 503 unavailable.
 */
export const answeredAs = <const C extends ReadonlyArray<ApiRefusalClass>>(...answers: C) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, InstanceType<C[number]> | ServiceUnavailable, R> =>
    Effect.catchAll(self, (e) => {
      const mapped: unknown = isEntityRefusal(e) ? refusal(e) : e
      return Effect.fail(answers.some((c) => mapped instanceof c) ? mapped as InstanceType<C[number]> & ApiRefusal : unavailable())
    })

/** Any failure of `self` (the database, the store) as 503 unavailable: for reads that have no answer of their own. */
export const orElseUnavailable = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, ServiceUnavailable, R> =>
  Effect.mapError(self, () => unavailable())
