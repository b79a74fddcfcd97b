// Head sampling over any Effect tracer: a trace is recorded or not when its first span starts,
// and every span below it follows (a caller's traceparent decides for the traces it starts, as
// OpenTelemetry's ParentBased sampler does). A span that is not recorded still carries ids, so
// its children and cluster messages know they are not sampled, but it is never exported.
import { Context, Option, Tracer } from "effect"

/** Pure: the recording decision for a span, from its parent (if any) and a uniform draw in [0, 1). */
export const isSampled = (parent: Option.Option<Tracer.AnySpan>, ratio: number, draw: () => number): boolean =>
  Option.isSome(parent) ? parent.value.sampled : ratio > 0 && draw() < ratio

const hex = (length: number): string => {
  let out = ""
  while (out.length < length) out += Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, "0")
  return out.slice(0, length)
}

const unrecordedProto = {
  _tag: "Span" as const,
  sampled: false,
  end() {},
  attribute() {},
  event() {},
  addLinks() {}
}

/** A span that is not exported: ids for propagation, nothing recorded. */
const unrecorded = (
  name: string,
  parent: Option.Option<Tracer.AnySpan>,
  context: Context.Context<never>,
  startTime: bigint,
  kind: Tracer.SpanKind
): Tracer.Span =>
  Object.assign(Object.create(unrecordedProto), {
    name,
    parent,
    context,
    kind,
    traceId: Option.isSome(parent) ? parent.value.traceId : hex(32),
    spanId: hex(16),
    status: { _tag: "Started", startTime },
    attributes: new Map(),
    links: []
  })

/** `inner` records the sampled traces; the others get spans that are never exported. */
export const headSampled = (inner: Tracer.Tracer, ratio: number, draw: () => number = Math.random): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) =>
      isSampled(parent, ratio, draw)
        ? inner.span(name, parent, context, links, startTime, kind, options)
        : unrecorded(name, parent, context, startTime, kind),
    context: (f, fiber) => inner.context(f, fiber)
  })
