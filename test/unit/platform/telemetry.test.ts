import { ConfigProvider, Context, Effect, Either, Option, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { withSpanIfTraced } from "../../../src/platform/telemetry/batchSpan.ts"
import { headSampled, isSampled } from "../../../src/platform/telemetry/headSampling.ts"
import { telemetryConfig, tracesUrlOf } from "../../../src/platform/telemetry/TelemetryConfig.ts"

const read = (vars: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(telemetryConfig, ConfigProvider.fromMap(new Map(Object.entries(vars))))))

const external = (sampled: boolean): Tracer.AnySpan => Tracer.externalSpan({ traceId: "a".repeat(32), spanId: "b".repeat(16), sampled })

/** A tracer that records the names of the spans it is asked for. */
const recording = () => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      names.push(name)
      return {
        _tag: "Span", name, parent, context, links, kind, sampled: true, traceId: "c".repeat(32), spanId: "d".repeat(16),
        status: { _tag: "Started", startTime }, attributes: new Map(), end: () => {}, attribute: () => {}, event: () => {}, addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  return { names, tracer }
}

describe("telemetry settings", () => {
  it("is off by default: no endpoint, every new trace sampled once on, text logs", () => {
    expect(read({})).toEqual(Either.right({ otlpTracesUrl: Option.none(), sampleRatio: 1, logFormat: "text" }))
  })

  it("takes SHARDLINE_OTEL_EXPORTER_OTLP_ENDPOINT before OTEL_EXPORTER_OTLP_ENDPOINT, and posts to <endpoint>/v1/traces", () => {
    expect(tracesUrlOf("http://c:4318/")).toBe("http://c:4318/v1/traces")
    const both = read({ SHARDLINE_OTEL_EXPORTER_OTLP_ENDPOINT: "http://own:4318", OTEL_EXPORTER_OTLP_ENDPOINT: "http://std:4318" })
    expect(Either.map(both, (c) => c.otlpTracesUrl)).toEqual(Either.right(Option.some("http://own:4318/v1/traces")))
    const standard = read({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://std:4318/base" })
    expect(Either.map(standard, (c) => c.otlpTracesUrl)).toEqual(Either.right(Option.some("https://std:4318/base/v1/traces")))
    expect(Either.map(read({ SHARDLINE_OTEL_EXPORTER_OTLP_ENDPOINT: " " }), (c) => c.otlpTracesUrl)).toEqual(Either.right(Option.none()))
  })

  it("refuses an endpoint that is not http(s), a ratio outside 0..1, an unknown log format", () => {
    expect(Either.isLeft(read({ SHARDLINE_OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://c:4317" }))).toBe(true)
    expect(Either.isLeft(read({ SHARDLINE_OTEL_SAMPLE_RATIO: "1.5" }))).toBe(true)
    expect(Either.isLeft(read({ SHARDLINE_OTEL_SAMPLE_RATIO: "-0.1" }))).toBe(true)
    expect(Either.isLeft(read({ SHARDLINE_LOG_FORMAT: "xml" }))).toBe(true)
    expect(Either.map(read({ SHARDLINE_OTEL_SAMPLE_RATIO: "0.01", SHARDLINE_LOG_FORMAT: "json" }), (c) => [c.sampleRatio, c.logFormat])).toEqual(Either.right([0.01, "json"]))
  })
})

describe("head sampling", () => {
  it("decides a new trace by the ratio, and follows the parent's decision below it", () => {
    expect(isSampled(Option.none(), 0.25, () => 0.2)).toBe(true)
    expect(isSampled(Option.none(), 0.25, () => 0.25)).toBe(false)
    expect(isSampled(Option.none(), 0, () => 0)).toBe(false)
    expect(isSampled(Option.none(), 1, () => 0.999)).toBe(true)
    expect(isSampled(Option.some(external(true)), 0, () => 0.5)).toBe(true)
    expect(isSampled(Option.some(external(false)), 1, () => 0)).toBe(false)
  })

  it("hands only sampled traces to the exporting tracer; the others get ids and record nothing", () => {
    const draws = [0.9, 0.1]
    const { names, tracer } = recording()
    const sampled = headSampled(tracer, 0.5, () => draws.shift()!)
    const run = (name: string) =>
      Effect.runSync(Effect.withTracer(Effect.withSpan(Effect.withSpan(Effect.currentSpan, `${name}.child`), name), sampled))
    const dropped = run("first") // draw 0.9: not recorded, nor its child
    expect(dropped.sampled).toBe(false)
    expect(dropped.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(dropped.spanId).toMatch(/^[0-9a-f]{16}$/)
    expect(Option.map(dropped.parent, (p) => p.traceId)).toEqual(Option.some(dropped.traceId))
    const kept = run("second") // draw 0.1: recorded, with its child
    expect(kept.sampled).toBe(true)
    expect(names).toEqual(["second", "second.child"])
    // A caller that says "not sampled" is obeyed whatever the ratio.
    const all = headSampled(tracer, 1, () => 0)
    Effect.runSync(Effect.withTracer(Effect.withSpan(Effect.void, "declined", { parent: external(false) }), all))
    expect(names).toEqual(["second", "second.child"])
  })
})

// withSpanIfTraced (batchSpan.ts): a span, and the parent it provides, only when the fiber's
// tracer is on; with it off the effect runs alone and its Context is not copied.
/** The parent span the body sees, and whether its Context is the one it was given (not a copy). */
const body = (given: Context.Context<never>) =>
  Effect.map(Effect.context<never>(), (ctx) => ({ sameContext: ctx === given, parent: Context.getOption(ctx, Tracer.ParentSpan) }))

describe("withSpanIfTraced", () => {
  it("opens the span and provides it as the parent when the tracer is on", async () => {
    const { names, tracer } = recording()
    const seen = await Effect.runPromise(Effect.flatMap(Effect.context<never>(), (ctx) => body(ctx).pipe(withSpanIfTraced("sql.execute", { kind: "client" }))).pipe(Effect.withTracer(tracer)))
    expect(names).toEqual(["sql.execute"])
    expect(seen.parent._tag === "Some" && seen.parent.value._tag === "Span" ? seen.parent.value.name : undefined).toBe("sql.execute")
    expect(seen.sameContext).toBe(false)
  })

  it("runs the effect alone, in the same Context, when the tracer is off", async () => {
    const { names, tracer } = recording()
    const seen = await Effect.runPromise(Effect.flatMap(Effect.context<never>(), (ctx) => body(ctx).pipe(withSpanIfTraced("sql.execute", { kind: "client" }))).pipe(Effect.withTracerEnabled(false), Effect.withTracer(tracer)))
    expect(names).toEqual([])
    expect(seen.parent._tag).toBe("None")
    expect(seen.sameContext).toBe(true)
  })
})
