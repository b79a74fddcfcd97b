// Work a fiber does for several requests at once (an entity's group commit) is traced as a child
// of the first recorded request in it, linked to the others, so each request's trace reaches the
// statements that served it. With no request of the batch recorded, the batch runs with the tracer
// off: @effect/sql opens a span per statement and per transaction (attributes and the query text
// set on each) that nobody would see, ~1 % of the node's CPU in the orders bench (session 24).
import { Effect, Option, Tracer } from "effect"

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
