// Work a fiber does for several requests at once (an entity's group commit) is traced as a child
// of the first recorded request in it, linked to the others, so each request's trace reaches the
// statements that served it. With no request of the batch recorded, the batch runs with the tracer
// off: @effect/sql opens a span per statement and per transaction (attributes and the query text
// set on each) that nobody would see, ~1 % of the node's CPU in the orders bench (session 24).
import { Effect, FiberRef, Option, Tracer } from "effect"

/** The caller's span if its trace is recorded: what a command carries to the fiber that runs it. */
export const recordedSpan: Effect.Effect<Tracer.AnySpan | undefined> = Effect.map(
  Effect.serviceOption(Tracer.ParentSpan),
  (span) => Option.isSome(span) && span.value.sampled ? span.value : undefined
)

export const withBatchSpan = (name: string, spans: ReadonlyArray<Tracer.AnySpan>, attributes: Record<string, unknown>) =>
<A, E, R>(batch: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  spans.length === 0 ? Effect.withTracerEnabled(batch, false) : Effect.withSpan(batch, name, {
    parent: spans[0],
    links: spans.slice(1).map((span) => ({ _tag: "SpanLink" as const, span, attributes: {} })),
    attributes,
    captureStackTrace: false
  })

/**
 * `Effect.withSpan` when the fiber's tracer is on, else the effect alone. With the tracer off
 * withSpan still makes a no-op span and provides it as the parent, and providing a service copies
 * the fiber's whole Context (a few hundred services in a node): for the three spans of every
 * market batch that was about 3 % of the node's allocations (session 27's heap profile).
 */
export const withSpanIfTraced = (name: string, options: Tracer.SpanOptions) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (on) => (on ? Effect.withSpan(effect, name, options) : effect))
