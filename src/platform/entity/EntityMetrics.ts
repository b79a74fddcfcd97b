// The metrics every entity reports, tagged with its type: activations, handler defects (each
// restarts the entity) and how late its durable timers run. One line per entity instead of the
// same tagging in each:
//   const metrics = entityMetrics("Authorization")
//   yield* metrics.activated                       // in the build effect (once per activation)
//   Grant: (req) => metrics.guard(handle(req))      // counts a defect, passes everything through
//   yield* metrics.timerFired(payload.dueAtMs)      // first thing in a DeliverAt handler
// The metric definitions live in ../Metrics.ts.
import { Effect, Metric } from "effect"
import { entityActivations, entityDefects, timerLag } from "../Metrics.ts"

export interface EntityMetrics {
  /** Counts one activation. */
  readonly activated: Effect.Effect<void>
  /** Runs a handler, counting a defect (then re-raising it unchanged). */
  readonly guard: <A, E, R>(handler: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Records how late a timer due at `dueAtMs` runs now (0 if early). */
  readonly timerFired: (dueAtMs: number) => Effect.Effect<void>
}

export const entityMetrics = (entityType: string): EntityMetrics => {
  // Tagged once here, not per call: Effect.tagMetrics would rebuild the key on every update.
  const activations = Metric.tagged(entityActivations, "type", entityType)
  const defects = Metric.tagged(entityDefects, "type", entityType)
  const lag = Metric.tagged(timerLag, "type", entityType)
  return {
    activated: Metric.increment(activations),
    guard: (handler) => Effect.tapDefect(handler, () => Metric.increment(defects)),
    timerFired: (dueAtMs) => Effect.suspend(() => Metric.update(lag, Math.max(0, Date.now() - dueAtMs)))
  }
}
