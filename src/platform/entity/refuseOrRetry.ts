// What a persisted entity request may answer for good. @effect/cluster keeps a persisted request's
// reply under its primary key, and a retry with the same key (the same Idempotency-Key, the same
// client request id) is answered from it. So a database failure returned as the request's error
// is kept too, and every later retry of that request is answered 503 for ever, although the
// database came back seconds later (chaos seed 3, session 16: a comment whose Change met a Postgres
// restart; its 22 retries over 90 s all got the stored failure).
//
// A database failure is therefore a defect here: the entity restarts and runs the request again
// (EntityManager re-sends its active requests after a defect, with backoff), its caller meanwhile
// answers 503, and the request's reply is only ever a real answer or a definite refusal. The
// handlers these wrap are written to run again (each checks what was already committed).
import { Effect } from "effect"

/** The database did not answer (an @effect/sql SqlError): nothing was decided, the request must run again. */
export const isDatabaseFailure = (e: unknown): boolean =>
  typeof e === "object" && e !== null && (e as { readonly _tag?: unknown })._tag === "SqlError"

/** `self`'s errors as the entity's refusal, except a database failure, which dies (runs again). */
export const refuseOrRetry = <R>(toRefusal: (e: unknown) => R) =>
  <A, E, Env>(self: Effect.Effect<A, E, Env>): Effect.Effect<A, R, Env> =>
    Effect.catchAll(self, (e) => isDatabaseFailure(e) ? Effect.die(e) : Effect.fail(toRefusal(e)))
