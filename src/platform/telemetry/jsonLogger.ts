// Log lines as JSON (SHARDLINE_LOG_FORMAT=json): Effect's structured record, one object per line,
// with the trace and span ids of the span the line was logged in when that trace is recorded, so
// a log store can jump to the trace and back.
import { Context, FiberRef, FiberRefs, Inspectable, Logger, Option, Tracer } from "effect"

/** The recorded span a log line belongs to, from the logging fiber's context. */
export const recordedSpanOf = (refs: FiberRefs.FiberRefs): Option.Option<Tracer.AnySpan> =>
  Context.getOption(FiberRefs.getOrDefault(refs, FiberRef.currentContext), Tracer.ParentSpan).pipe(
    Option.filter((span) => span.sampled)
  )

/** One JSON object per log line (without the newline): Effect's structured fields plus traceId/spanId. */
export const jsonLine = Logger.map(
  Logger.zip(Logger.structuredLogger, Logger.make(({ context }) => recordedSpanOf(context))),
  ([record, span]) =>
    Inspectable.stringifyCircular(Option.match(span, {
      onNone: () => record,
      onSome: (s) => ({ ...record, traceId: s.traceId, spanId: s.spanId })
    }))
)

/** Replaces Effect's default logger with JSON lines on stdout. */
export const jsonLogs = Logger.replace(Logger.defaultLogger, Logger.withConsoleLog(jsonLine))
