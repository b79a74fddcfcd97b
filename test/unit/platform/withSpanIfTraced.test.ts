// withSpanIfTraced (platform/telemetry/batchSpan.ts): a span, and the parent it provides, only
// when the fiber's tracer is on; with it off the effect runs alone and its Context is not copied.
import { Context, Effect, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { withSpanIfTraced } from "../../../src/platform/telemetry/batchSpan.ts"

const counting = () => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      names.push(name)
      return {
        _tag: "Span", name, parent, context, links, kind, sampled: true, traceId: "a".repeat(32), spanId: "b".repeat(16),
        status: { _tag: "Started", startTime }, attributes: new Map(), end: () => {}, attribute: () => {}, event: () => {}, addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  return { names, tracer }
}

/** The parent span the body sees, and whether its Context is the one it was given (not a copy). */
const body = (given: Context.Context<never>) =>
  Effect.map(Effect.context<never>(), (ctx) => ({ sameContext: ctx === given, parent: Context.getOption(ctx, Tracer.ParentSpan) }))

describe("withSpanIfTraced", () => {
  it("opens the span and provides it as the parent when the tracer is on", async () => {
    const { names, tracer } = counting()
    const seen = await Effect.runPromise(Effect.flatMap(Effect.context<never>(), (ctx) => body(ctx).pipe(withSpanIfTraced("sql.execute", { kind: "client" }))).pipe(Effect.withTracer(tracer)))
    expect(names).toEqual(["sql.execute"])
    expect(seen.parent._tag === "Some" && seen.parent.value._tag === "Span" ? seen.parent.value.name : undefined).toBe("sql.execute")
    expect(seen.sameContext).toBe(false)
  })

  it("runs the effect alone, in the same Context, when the tracer is off", async () => {
    const { names, tracer } = counting()
    const seen = await Effect.runPromise(Effect.flatMap(Effect.context<never>(), (ctx) => body(ctx).pipe(withSpanIfTraced("sql.execute", { kind: "client" }))).pipe(Effect.withTracerEnabled(false), Effect.withTracer(tracer)))
    expect(names).toEqual([])
    expect(seen.parent._tag).toBe("None")
    expect(seen.sameContext).toBe(true)
  })
})
