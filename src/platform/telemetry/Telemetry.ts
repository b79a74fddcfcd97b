// A node's traces and log format, as one layer given beneath everything else in the node, so
// every fiber it starts (listeners, entities, timers) inherits them.
//
// Tracing off (no endpoint, the default): the tracer is disabled for the whole node, so no span
// is made anywhere (SQL statements, cluster messages, handlers) and a request costs nothing extra.
// Tracing on: Effect's OTLP/HTTP exporter (JSON, batched every 5 s, flushed at shutdown) behind
// head sampling (headSampling.ts); the listeners open one server span per request.
import { FetchHttpClient } from "@effect/platform"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { Effect, Layer, Option } from "effect"
import { headSampled } from "./headSampling.ts"
import { jsonLogs } from "./jsonLogger.ts"
import type { TelemetryConfigShape } from "./TelemetryConfig.ts"

/** The resource's service.name: one service name for every node, each node its own instance id. */
export const serviceName = "shardline"

export const tracingOn = (config: TelemetryConfigShape): boolean => Option.isSome(config.otlpTracesUrl)

const tracer = (url: string, ratio: number, node: string) =>
  Layer.unwrapScoped(Effect.map(
    OtlpTracer.make({ url, resource: { serviceName, attributes: { "service.instance.id": node } } }),
    (otlp) => Layer.setTracer(headSampled(otlp, ratio))
  )).pipe(Layer.provide([FetchHttpClient.layer, OtlpSerialization.layerJson]))

/** The log format alone (an entry point's own lines before the node starts). */
export const logLayer = (config: TelemetryConfigShape): Layer.Layer<never> => (config.logFormat === "json" ? jsonLogs : Layer.empty)

export const layer = (config: TelemetryConfigShape, node: string): Layer.Layer<never> =>
  Layer.mergeAll(
    Option.match(config.otlpTracesUrl, {
      onNone: () => Layer.setTracerEnabled(false),
      onSome: (url) => tracer(url, config.sampleRatio, node)
    }),
    logLayer(config)
  )
