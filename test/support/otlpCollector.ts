// An OpenTelemetry collector for tests: takes OTLP/HTTP JSON trace exports (POST /v1/traces) on a
// free port and keeps every span in memory, flattened, for a test to read the trees it got.
import { createServer } from "node:http"
import { freePort } from "../../harness/ports.ts"

export interface CollectedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
  /** The resource's attributes (service.name, service.instance.id). */
  readonly resource: Record<string, unknown>
}

interface KeyValue {
  readonly key: string
  readonly value: Record<string, unknown>
}

const valueOf = (v: Record<string, unknown>): unknown => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue ?? v.arrayValue ?? v.kvlistValue
const record = (kvs: ReadonlyArray<KeyValue> | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

export interface Collector {
  /** The endpoint to configure (`SHARDLINE_OTEL_EXPORTER_OTLP_ENDPOINT`): the base, without /v1/traces. */
  readonly endpoint: string
  readonly spans: () => ReadonlyArray<CollectedSpan>
  /** Paths the exporter posted to (to check it used /v1/traces). */
  readonly paths: () => ReadonlyArray<string>
  readonly stop: () => Promise<void>
}

export const startCollector = async (): Promise<Collector> => {
  const spans: Array<CollectedSpan> = []
  const paths: Array<string> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      paths.push(req.url ?? "")
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans: Array<{ resource: { attributes: Array<KeyValue> }; scopeSpans: Array<{ spans: Array<any> }> }>
      }
      for (const rs of body.resourceSpans) {
        const resource = record(rs.resource.attributes)
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId, name: s.name, kind: s.kind, attributes: record(s.attributes), resource })
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    paths: () => [...paths],
    stop: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
