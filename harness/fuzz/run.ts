// A seeded fuzz run across the three listeners of a running node: each listener's operations read
// from its own /openapi.json, request i drawn from the seed's stream for i (so one request is
// replayed alone with its seed and index), sent on its own connection by a few workers at once,
// and every answer checked (verdict.ts). Returns the counts and every failure.
import { makeRng } from "../chaos/rng.ts"
import { type FuzzContext, type FuzzRequest, generate } from "./generate.ts"
import { operationsOf, type Service, type ServiceDocument } from "./operations.ts"
import { send } from "./rawHttp.ts"
import { verdict } from "./verdict.ts"

export interface FuzzTarget {
  readonly service: Service
  /** http://host:port of the listener. */
  readonly baseUrl: string
}

export interface FuzzOptions {
  readonly targets: ReadonlyArray<FuzzTarget>
  readonly context: FuzzContext
  readonly seed: number
  readonly requests: number
  /** Requests in flight at once. */
  readonly concurrency?: number
  /** How long one answer may take, ms (a request whose body never comes waits out the body time). */
  readonly answerTimeoutMs?: number
  /** Only these request indexes (a replay of failures). */
  readonly only?: ReadonlyArray<number>
  readonly log?: (line: string) => void
}

export interface FuzzFailure {
  readonly index: number
  readonly service: Service
  readonly route: string
  readonly request: string
  readonly status: number | undefined
  readonly body: string
  readonly problems: ReadonlyArray<string>
}

export interface FuzzReport {
  readonly seed: number
  readonly requests: number
  readonly ms: number
  /** Answers per service and status. */
  readonly statuses: Readonly<Record<string, Readonly<Record<string, number>>>>
  /** Operations drawn, of those documented. */
  readonly operationsHit: number
  readonly operations: number
  readonly fivexx: number
  readonly failures: ReadonlyArray<FuzzFailure>
}

/** A request as one line a person can read (and paste into a raw socket). */
const describe = (r: FuzzRequest) => {
  const preview = r.body.subarray(0, 200).toString("latin1")
  const headers = r.headers.map(([k, v]) => `${k}: ${v.length > 80 ? `${v.slice(0, 80)}…(${v.length})` : v}`).join(" | ")
  const target = r.target.length > 300 ? `${r.target.slice(0, 300)}…(${r.target.length})` : r.target
  return `${r.method} ${target} [${headers}]${r.chunked === true ? " chunked" : ""}${r.declaredLength === undefined ? "" : ` declared ${r.declaredLength}`} body(${r.body.length}): ${JSON.stringify(preview)}`
}

export const loadDocuments = async (targets: ReadonlyArray<FuzzTarget>): Promise<ReadonlyArray<ServiceDocument>> =>
  Promise.all(targets.map(async (t) => {
    const r = await fetch(`${t.baseUrl}/openapi.json`)
    if (r.status !== 200) throw new Error(`${t.service}: /openapi.json answered ${r.status}`)
    return operationsOf(t.service, await r.json())
  }))

export const runFuzz = async (options: FuzzOptions): Promise<FuzzReport> => {
  const started = performance.now()
  const docs = await loadDocuments(options.targets)
  const byService = new Map(options.targets.map((t) => [t.service, new URL(t.baseUrl)]))
  const root = makeRng(options.seed)
  const statuses: Record<string, Record<string, number>> = {}
  const hit = new Set<string>()
  const failures: Array<FuzzFailure> = []
  let fivexx = 0
  const indexes = options.only ?? Array.from({ length: options.requests }, (_, i) => i)
  let next = 0
  const worker = async () => {
    for (;;) {
      const i = next++
      if (i >= indexes.length) return
      const index = indexes[i]!
      const rng = root.fork(`request ${index}`)
      const doc = rng.pick(docs)
      const request = generate(doc, options.context, rng)
      hit.add(`${request.service} ${request.route}`)
      const url = byService.get(request.service)!
      const result = await send(url.hostname, Number(url.port), request, options.answerTimeoutMs ?? 20_000)
      const status = "error" in result ? "none" : String(result.status)
      const counts = (statuses[request.service] ??= {})
      counts[status] = (counts[status] ?? 0) + 1
      if (!("error" in result) && result.status >= 500) fivexx++
      const problems = verdict(request, result)
      if (problems.length > 0) {
        failures.push({
          index, service: request.service, route: request.route, request: describe(request),
          status: "error" in result ? undefined : result.status,
          body: "error" in result ? "" : result.body.subarray(0, 400).toString("utf8"),
          problems
        })
        options.log?.(`request ${index} (${request.service} ${request.route}): ${problems.join("; ")}`)
      }
    }
  }
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker))
  return {
    seed: options.seed, requests: indexes.length, ms: Math.round(performance.now() - started), statuses,
    operationsHit: hit.size, operations: docs.reduce((n, d) => n + d.operations.length, 0), fivexx,
    failures: failures.sort((a, b) => a.index - b.index)
  }
}

/** The report as a few lines: totals, statuses per service, failures (the first `shown`). */
export const summary = (report: FuzzReport, shown = 20): string => {
  const lines = [
    `fuzz: seed ${report.seed}, ${report.requests} requests in ${(report.ms / 1000).toFixed(1)} s, ${report.operationsHit} of ${report.operations} operations drawn`,
    ...Object.entries(report.statuses).map(([service, counts]) =>
      `  ${service.padEnd(8)} ${Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}:${n}`).join("  ")}`),
    `  5xx: ${report.fivexx}; answers outside the documented shape or missing: ${report.failures.length}`
  ]
  for (const f of report.failures.slice(0, shown)) {
    lines.push(`  #${f.index} ${f.service} ${f.route} → ${f.status ?? "no answer"}: ${f.problems.join("; ")}`, `      ${f.request}`, `      answered: ${JSON.stringify(f.body.slice(0, 200))}`)
  }
  return lines.join("\n")
}
