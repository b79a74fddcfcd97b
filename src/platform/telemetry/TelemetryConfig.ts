// Traces and log lines: where traces go (OTLP over HTTP), what share of requests is traced, and
// whether log lines are JSON. Tracing is off unless an endpoint is set; then the standard
// OTEL_EXPORTER_OTLP_ENDPOINT is honoured too, so a collector's usual setup works unchanged.
import { Config, Option } from "effect"

export interface TelemetryConfigShape {
  /** Where spans are POSTed (OTLP/HTTP JSON), e.g. http://collector:4318/v1/traces; none: tracing off. */
  readonly otlpTracesUrl: Option.Option<string>
  /** Head sampling: the share of new traces that are recorded, 0 to 1; a caller's traceparent decides for its own. */
  readonly sampleRatio: number
  /** "text": Effect's logfmt lines; "json": one JSON object per line, with trace and span ids when traced. */
  readonly logFormat: "text" | "json"
}

/** OTLP's base endpoint to its traces URL (`<endpoint>/v1/traces`), as the OpenTelemetry spec says. */
export const tracesUrlOf = (endpoint: string): string => `${endpoint.replace(/\/+$/, "")}/v1/traces`

const endpoint = (name: string) =>
  Config.option(Config.string(name).pipe(
    Config.map((s) => s.trim()),
    Config.validate({
      message: "must be an http(s) URL (the collector's OTLP/HTTP base, e.g. http://127.0.0.1:4318)",
      validation: (u) => u === "" || (URL.canParse(u) && ["http:", "https:"].includes(new URL(u).protocol))
    })
  )).pipe(Config.map(Option.filter((s) => s !== "")))

export const telemetryConfig: Config.Config<TelemetryConfigShape> = Config.all({
  otlpTracesUrl: Config.all([endpoint("SHARDLINE_OTEL_EXPORTER_OTLP_ENDPOINT"), endpoint("OTEL_EXPORTER_OTLP_ENDPOINT")]).pipe(
    Config.map(([own, standard]) => Option.map(Option.orElse(own, () => standard), tracesUrlOf))
  ),
  sampleRatio: Config.number("SHARDLINE_OTEL_SAMPLE_RATIO").pipe(
    Config.validate({ message: "must be a number from 0 to 1 (the share of new traces recorded)", validation: (r) => r >= 0 && r <= 1 }),
    Config.withDefault(1)
  ),
  logFormat: Config.literal("text", "json")("SHARDLINE_LOG_FORMAT").pipe(Config.withDefault("text" as const))
})
