// The chaos run's digest of node warnings and errors (what a failed CI run leaves to read): log
// lines parsed from Effect's logfmt output, repeats folded together across ids and numbers, errors
// listed before warnings, and the list cut at its limit with a count of what was left out.
import { describe, expect, it } from "vitest"
import { digestLines, digestLogs, foldMessage, parseLogLine } from "../../../harness/chaos/logDigest.ts"

const t0 = Date.parse("2026-11-30T08:00:00.000Z")
const line = (s: number, level: string, message: string) =>
  `timestamp=${new Date(t0 + s * 1000).toISOString()} level=${level} fiber=#12 message=${JSON.stringify(message)} cause="x"`

describe("chaos log digest", () => {
  it("parses a logfmt line with a quoted message, and ignores other output", () => {
    expect(parseLogLine(line(3, "WARN", "order \"a\" quiet"))).toEqual({ atMs: t0 + 3000, level: "WARN", message: "order \"a\" quiet" })
    expect(parseLogLine("timestamp=2026-11-30T08:00:01.000Z level=INFO fiber=#1 message=started")?.message).toBe("started")
    expect(parseLogLine("node listening on 8080")).toBeUndefined()
  })

  it("parses the pretty format, its time of day placed on the run's day", () => {
    expect(parseLogLine("[08:00:12.250] ERROR (#100): Shard lock storage is unhealthy", t0)).toEqual({ atMs: t0 + 12_250, level: "ERROR", message: "Shard lock storage is unhealthy" })
    // A run started just before midnight: a line just after it is on the next day.
    const lateT0 = Date.parse("2026-11-30T23:59:50.000Z")
    expect(parseLogLine("[00:00:05.000] WARN (#7): late", lateT0)?.atMs).toBe(lateT0 + 15_000)
  })

  it("folds ids, hashes, references and numbers so repeats group", () => {
    expect(foldMessage("order 0b1c2d3e-1111-2222-3333-444455556666 (TX-J5EQ1VXF): 12 legs at 0xabcdefabcdefabcdefabcdefabcdef12")).toBe("order <uuid> (TX-<ref>): # legs at <hex>")
  })

  it("groups per node and message with counts and first/last time, errors first, cut at the limit", () => {
    const rows = digestLogs([
      { node: "node1/10", text: [line(5, "WARN", "desk: 3 order(s) quiet"), line(9, "WARN", "desk: 7 order(s) quiet"), line(10, "INFO", "fine"), line(12, "ERROR", "Shard lock storage is unhealthy")].join("\n") },
      { node: "node2/11", text: line(7, "WARN", "desk: 1 order(s) quiet") }
    ], t0)
    expect(rows).toHaveLength(3)
    expect(rows[0]).toMatchObject({ node: "node1/10", level: "WARN", message: "desk: # order(s) quiet", count: 2, firstMs: 5000, lastMs: 9000 })
    const lines = digestLines(rows, 2)
    expect(lines[0]).toBe("  node1/10 ERROR ×1 12.0–12.0 s: Shard lock storage is unhealthy")
    expect(lines[1]).toBe("  node1/10 WARN ×2 5.0–9.0 s: desk: # order(s) quiet")
    expect(lines[2]).toBe("  … 1 more distinct messages in the node logs")
  })
})
