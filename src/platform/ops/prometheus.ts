// Renders Effect's metric registry as Prometheus text exposition format (version 0.0.4).
// The cluster's own metrics (effect_cluster_*) come along, since they live in the same registry.
import { Metric, MetricState } from "effect"

const sanitize = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, "_")
const escape = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")

const labels = (tags: ReadonlyArray<{ key: string; value: string }>, extra: Record<string, string> = {}) => {
  const all = [...tags.map((t) => [t.key, t.value] as const), ...Object.entries(extra)]
  return all.length === 0 ? "" : `{${all.map(([k, v]) => `${sanitize(k)}="${escape(v)}"`).join(",")}}`
}

const num = (n: number | bigint) => (typeof n === "bigint" ? n.toString() : Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN")

export const render = (): string => {
  const byName = new Map<string, { type: string; help: string; lines: Array<string> }>()
  for (const pair of Metric.unsafeSnapshot()) {
    const name = sanitize(pair.metricKey.name)
    const tags = pair.metricKey.tags
    const state = pair.metricState
    const help = pair.metricKey.description._tag === "Some" ? pair.metricKey.description.value : name
    const entry = (type: string) => {
      let e = byName.get(name)
      if (!e) byName.set(name, (e = { type, help, lines: [] }))
      return e
    }
    if (MetricState.isCounterState(state)) {
      entry("counter").lines.push(`${name}${labels(tags)} ${num(state.count)}`)
    } else if (MetricState.isGaugeState(state)) {
      entry("gauge").lines.push(`${name}${labels(tags)} ${num(state.value)}`)
    } else if (MetricState.isHistogramState(state)) {
      const e = entry("histogram")
      // Effect's buckets are already cumulative counts per upper bound.
      for (const [le, count] of state.buckets) {
        e.lines.push(`${name}_bucket${labels(tags, { le: Number.isFinite(le) ? String(le) : "+Inf" })} ${count}`)
      }
      if (!state.buckets.some(([le]) => !Number.isFinite(le))) {
        e.lines.push(`${name}_bucket${labels(tags, { le: "+Inf" })} ${state.count}`)
      }
      e.lines.push(`${name}_sum${labels(tags)} ${num(state.sum)}`, `${name}_count${labels(tags)} ${state.count}`)
    } else if (MetricState.isFrequencyState(state)) {
      const e = entry("counter")
      for (const [key, count] of state.occurrences) e.lines.push(`${name}${labels(tags, { key })} ${count}`)
    } else if (MetricState.isSummaryState(state)) {
      const e = entry("summary")
      for (const [q, v] of state.quantiles) {
        if (v._tag === "Some") e.lines.push(`${name}${labels(tags, { quantile: String(q) })} ${num(v.value)}`)
      }
      e.lines.push(`${name}_sum${labels(tags)} ${num(state.sum)}`, `${name}_count${labels(tags)} ${state.count}`)
    }
  }
  const out: Array<string> = []
  for (const [name, e] of [...byName.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    out.push(`# HELP ${name} ${e.help.replace(/\n/g, " ")}`, `# TYPE ${name} ${e.type}`, ...e.lines)
  }
  return out.join("\n") + "\n"
}
