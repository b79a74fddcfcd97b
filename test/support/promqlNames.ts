// The metric names an alert rule or a dashboard panel reads, so a test can hold them against a real
// node's /metrics (test/integration/ops-metric-names.test.ts). Not a PromQL parser: it removes what
// cannot be a metric name (strings, label matchers, `by (…)` lists, ranges, Grafana variables,
// numbers, function calls and operators) and keeps the identifiers left.

const keywords = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"])

/** Pure: the metric names one PromQL expression selects. */
export const metricNames = (expr: string): Set<string> => {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, "\"\"")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\$\w+/g, " ")
  const names = new Set<string>()
  for (const m of bare.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)) {
    const name = m[1]!
    if (!keywords.has(name.toLowerCase())) names.add(name)
  }
  return names
}

/** Pure: every `expr:` of a Prometheus rule file, one-line or a `|` block (the shapes alerts.yml uses). */
export const ruleExpressions = (yaml: string): Array<string> => {
  const lines = yaml.split("\n")
  const out: Array<string> = []
  lines.forEach((line, i) => {
    const m = /^(\s*)expr:\s*(.*)$/.exec(line)
    if (m === null) return
    const value = m[2]!.trim()
    if (value !== "|" && value !== ">" && !value.startsWith("|") && !value.startsWith(">")) {
      out.push(value.replace(/^'(.*)'$/, "$1").replace(/^"(.*)"$/, "$1"))
      return
    }
    const indent = m[1]!.length
    const block: Array<string> = []
    for (let j = i + 1; j < lines.length; j++) {
      const l = lines[j]!
      if (l.trim() !== "" && l.length - l.trimStart().length <= indent) break
      block.push(l.trim())
    }
    out.push(block.join(" ").trim())
  })
  return out
}

/** Pure: every `expr` of a Grafana dashboard's panels (rows' nested panels too). */
export const dashboardExpressions = (dashboard: unknown): Array<string> => {
  const out: Array<string> = []
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk)
    if (v === null || typeof v !== "object") return
    const o = v as Record<string, unknown>
    if (Array.isArray(o["targets"])) for (const t of o["targets"]) if (typeof (t as Record<string, unknown>)["expr"] === "string") out.push((t as Record<string, string>)["expr"]!)
    if (Array.isArray(o["panels"])) walk(o["panels"])
  }
  walk((dashboard as Record<string, unknown>)["panels"])
  return out
}

/** Pure: the metric families of a Prometheus text exposition, with their TYPE (untyped when absent). */
export const exposedFamilies = (text: string): Map<string, string> => {
  const families = new Map<string, string>()
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line)
    if (type !== null) families.set(type[1]!, type[2]!)
    else if (line !== "" && !line.startsWith("#")) {
      const name = /^([a-zA-Z_:][\w:]*)/.exec(line)?.[1]
      if (name !== undefined && !families.has(name)) families.set(name, "untyped")
    }
  }
  return families
}

/** Series Prometheus makes itself for every target: a rule may read them though no node exports them. */
export const scrapeSeries = new Set(["up", "scrape_duration_seconds", "scrape_samples_scraped"])

/** Pure: the names among `used` that neither the exposition has (a histogram's _bucket, _sum and
 * _count included, a summary's _sum and _count) nor Prometheus makes itself. */
export const missingNames = (used: Iterable<string>, families: Map<string, string>): Array<string> =>
  [...used].filter((name) => {
    if (scrapeSeries.has(name) || families.has(name)) return false
    const suffix = /^(.*)_(bucket|sum|count)$/.exec(name)
    if (suffix === null) return true
    const type = families.get(suffix[1]!)
    return !(type === "histogram" || (type === "summary" && suffix[2] !== "bucket"))
  }).sort()
