// The metrics every entity reports, tagged with its type: activations, messages handled and in
// hand, handler defects (each restarts the entity, its last error kept for /ops) and how late its
// durable timers run. One line per entity instead of the same tagging in each:
//   const metrics = entityMetrics("Authorization")
//   yield* metrics.activated                       // in the build effect (once per activation)
//   Grant: (req) => metrics.guard(handle(req))      // counts the message and a defect, passes everything through
//   yield* metrics.timerFired(payload.dueAtMs)      // first thing in a DeliverAt handler
// The metric definitions live in ../Metrics.ts.
import { Cause, Effect, Metric } from "effect"
import { entityActivations, entityDefects, entityInFlight, entityMessages, timerLag } from "../Metrics.ts"

export interface EntityMetrics {
  /** Counts one activation. */
  readonly activated: Effect.Effect<void>
  /** Runs a handler, counting the message and a defect (then re-raising it unchanged). */
  readonly guard: <A, E, R>(handler: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Records how late a timer due at `dueAtMs` runs now (0 if early). */
  readonly timerFired: (dueAtMs: number) => Effect.Effect<void>
}

/** The last defect of an entity type on this node: what ops sees when an entity dies. */
export interface LastDefect {
  readonly message: string
  readonly at: string
}

/** Longest defect message kept (the first line of the cause, cut). */
export const defectMessageMax = 300

const lastDefects = new Map<string, LastDefect>()

/** This node's last defect per entity type (NodeReporter sends it to /ops). */
export const lastDefectsByType = (): Record<string, LastDefect> => Object.fromEntries(lastDefects)

export const entityMetrics = (entityType: string): EntityMetrics => {
  // Tagged once here, not per call: Effect.tagMetrics would rebuild the key on every update.
  const activations = Metric.tagged(entityActivations, "type", entityType)
  const defects = Metric.tagged(entityDefects, "type", entityType)
  const messages = Metric.tagged(entityMessages, "type", entityType)
  const inFlight = Metric.tagged(entityInFlight, "type", entityType)
  const lag = Metric.tagged(timerLag, "type", entityType)
  // Registered now, at 0: /metrics lists every type's series from the start, so an alert rule or a
  // dashboard panel over them has a series to read before the first defect or the first timer.
  for (const metric of [activations, defects, messages, inFlight, lag] as const) metric.unsafeValue([])
  let inHand = 0
  const onDefect = (cause: Cause.Cause<unknown>) =>
    Effect.sync(() => {
      defects.unsafeUpdate(1, [])
      const first = Cause.pretty(cause).split("\n")[0] ?? "defect"
      lastDefects.set(entityType, { message: first.slice(0, defectMessageMax), at: new Date().toISOString() })
    })
  return {
    activated: Metric.increment(activations),
    guard: (handler) =>
      Effect.suspend(() => {
        messages.unsafeUpdate(1, [])
        inFlight.unsafeUpdate(++inHand, [])
        return handler.pipe(
          Effect.tapErrorCause((cause) => (Cause.isDie(cause) ? onDefect(cause) : Effect.void)),
          Effect.ensuring(Effect.sync(() => inFlight.unsafeUpdate(--inHand, [])))
        )
      }),
    timerFired: (dueAtMs) => Effect.suspend(() => Metric.update(lag, Math.max(0, Date.now() - dueAtMs)))
  }
}
