import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"

export type Row = Record<string, string | number>

const here = dirname(fileURLToPath(import.meta.url))

/** Prints rows as an aligned text table. */
export const printTable = (title: string, rows: ReadonlyArray<Row>): void => {
  if (rows.length === 0) return
  const cols = Object.keys(rows[0]!)
  const cell = (v: string | number | undefined) =>
    typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : (v ?? "")
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (vals: string[]) => vals.map((v, i) => v.padStart(widths[i]!)).join("  ")
  // The box is shared: every table says how loaded it was when its figures were taken.
  console.log(`\n${title}  [load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}]`)
  console.log(line(cols))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  for (const r of rows) console.log(line(cols.map((c) => cell(r[c]))))
}

/** Writes a benchmark's results to bench/results/<name>.json and returns the path. */
export const writeResults = (name: string, data: unknown): string => {
  const file = join(here, "results", `${name}.json`)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify({ name, at: new Date().toISOString(), node: process.version, loadAverage: loadavg(), data }, null, 2))
  console.log(`\nwrote ${file}`)
  return file
}

/** A positive integer knob from the environment (BENCH_…), or its default. */
export const envInt = (name: string, fallback: number): number => {
  const v = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name} must be a positive integer`)
  return v
}
