// A short digest of the nodes' warnings and errors for a run with a violation. CI keeps only the
// tail of the run's output and none of the node log folder (it is on the CI machine's /tmp), so
// the digest is what a failed CI run leaves to read: each distinct message (numbers, ids and
// hashes folded) per node, how often, and its first and last time on the run's clock.

/** One log entry of a node's text output. */
export interface LogEntry {
  readonly atMs: number
  readonly level: string
  readonly message: string
}

const entryRe = /timestamp=(\S+) level=(\w+)[^\n]*? message=("(?:[^"\\]|\\.)*"|\S+)/
/** Effect's pretty logger (the node's default on a terminal and in the harness): `[HH:MM:SS.mmm] LEVEL (#fiber): message`. */
const prettyRe = /^\[(\d\d):(\d\d):(\d\d)\.(\d{3})\] (\w+) \(#\d+\): (.*)$/

/** The clock time of day `h:m:s.ms` on the day of `nearMs` (the UTC day; the one before or after when that is nearer). */
const timeOfDayNear = (nearMs: number, h: number, m: number, s: number, ms: number): number => {
  const day = new Date(nearMs)
  const at = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), h, m, s, ms)
  const dayMs = 86_400_000
  return at - nearMs > dayMs / 2 ? at - dayMs : nearMs - at > dayMs / 2 ? at + dayMs : at
}

/**
 * The entry of one line, if it is a log line at all: logfmt (`timestamp=… level=… message=…`) or
 * the pretty format, whose time of day is placed on the day of `nearMs` (the run's start).
 */
export const parseLogLine = (line: string, nearMs: number = Date.now()): LogEntry | undefined => {
  const p = prettyRe.exec(line)
  if (p !== null) {
    return { atMs: timeOfDayNear(nearMs, Number(p[1]), Number(p[2]), Number(p[3]), Number(p[4])), level: p[5]!, message: p[6]! }
  }
  const m = entryRe.exec(line)
  if (m === null) return undefined
  const atMs = Date.parse(m[1]!)
  if (Number.isNaN(atMs)) return undefined
  const raw = m[3]!
  let message = raw
  if (raw.startsWith("\"")) {
    try {
      message = JSON.parse(raw) as string
    } catch {
      message = raw.slice(1, -1)
    }
  }
  return { atMs, level: m[2]!, message }
}

/** A message with what varies between occurrences folded, so repeats group together. */
export const foldMessage = (message: string): string =>
  message.split("\n")[0]!
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>")
    .replace(/\b(0x)?[0-9a-f]{24,}\b/gi, "<hex>")
    .replace(/\bTX-[A-Z0-9]+\b/g, "TX-<ref>")
    .replace(/\d+(\.\d+)?/g, "#")
    .slice(0, 140)

export interface DigestRow {
  readonly node: string
  readonly level: string
  readonly message: string
  readonly count: number
  readonly firstMs: number
  readonly lastMs: number
}

/** Warnings and worse, grouped per node and folded message, most frequent first. */
export const digestLogs = (logs: ReadonlyArray<{ readonly node: string; readonly text: string }>, t0: number): ReadonlyArray<DigestRow> => {
  const rows = new Map<string, { node: string; level: string; message: string; count: number; firstMs: number; lastMs: number }>()
  for (const { node, text } of logs) {
    for (const line of text.split("\n")) {
      const e = parseLogLine(line, t0)
      if (e === undefined || !(e.level === "WARN" || e.level === "ERROR" || e.level === "FATAL")) continue
      const message = foldMessage(e.message)
      const key = `${node}\u0000${e.level}\u0000${message}`
      const at = e.atMs - t0
      const row = rows.get(key)
      if (row === undefined) rows.set(key, { node, level: e.level, message, count: 1, firstMs: at, lastMs: at })
      else {
        row.count++
        row.firstMs = Math.min(row.firstMs, at)
        row.lastMs = Math.max(row.lastMs, at)
      }
    }
  }
  return [...rows.values()].sort((a, b) => b.count - a.count || a.firstMs - b.firstMs)
}

/** The digest as lines, at most `max` (errors first, then the most frequent warnings). */
export const digestLines = (rows: ReadonlyArray<DigestRow>, max: number): ReadonlyArray<string> => {
  const ordered = [...rows.filter((r) => r.level !== "WARN"), ...rows.filter((r) => r.level === "WARN")]
  const shown = ordered.slice(0, max).map((r) =>
    `  ${r.node} ${r.level} ×${r.count} ${(r.firstMs / 1000).toFixed(1)}–${(r.lastMs / 1000).toFixed(1)} s: ${r.message}`)
  return ordered.length > max ? [...shown, `  … ${ordered.length - max} more distinct messages in the node logs`] : shown
}
