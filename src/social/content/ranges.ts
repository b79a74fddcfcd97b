// HTTP Range requests over a known size (RFC 9110 §14): `bytes=a-b`, `bytes=a-`, `bytes=-n`, and
// several ranges at once. Pure. The answers follow the RFC: a Range we cannot parse, or for a
// unit other than bytes, is ignored (the whole item, 200); a parsable set of which no range is
// satisfiable is 416; overlapping or too many ranges are served whole rather than amplified
// (§14.2 allows ignoring them).
import type { ByteRange } from "./ContentStore.ts"

/** More ranges than this in one request are served as the whole item (RFC 9110 §14.2). */
export const rangesMax = 16

export type RangeAnswer =
  | { readonly _tag: "Whole" }
  | { readonly _tag: "Partial"; readonly ranges: ReadonlyArray<ByteRange> }
  | { readonly _tag: "Unsatisfiable" }

const SPEC = /^(\d*)-(\d*)$/

export const parseRange = (header: string | undefined, size: number): RangeAnswer => {
  if (header === undefined) return { _tag: "Whole" }
  const m = /^\s*bytes\s*=\s*(.+)$/i.exec(header)
  if (m === null) return { _tag: "Whole" }
  const specs = m[1]!.split(",").map((s) => s.trim()).filter((s) => s !== "")
  if (specs.length === 0 || specs.length > rangesMax) return { _tag: "Whole" }
  const ranges: Array<ByteRange> = []
  for (const spec of specs) {
    const p = SPEC.exec(spec)
    if (p === null || (p[1] === "" && p[2] === "")) return { _tag: "Whole" }
    if (p[1]!.length > 15 || p[2]!.length > 15) return { _tag: "Whole" }
    if (p[1] === "") {
      // Suffix: the last n bytes; n = 0 is unsatisfiable.
      const n = Number(p[2])
      if (n > 0 && size > 0) ranges.push({ start: Math.max(0, size - n), end: size - 1 })
      continue
    }
    const start = Number(p[1])
    const end = p[2] === "" ? size - 1 : Number(p[2])
    // A reversed range makes the whole header invalid (§14.1.1): ignore it.
    if (p[2] !== "" && end < start) return { _tag: "Whole" }
    if (start < size) ranges.push({ start, end: Math.min(end, size - 1) })
  }
  if (ranges.length === 0) return { _tag: "Unsatisfiable" }
  const sorted = [...ranges].sort((a, b) => a.start - b.start)
  if (sorted.some((r, i) => i > 0 && r.start <= sorted[i - 1]!.end)) return { _tag: "Whole" }
  return { _tag: "Partial", ranges }
}

/** `If-Range` (§13.1.5): the range applies only when the validator is our current ETag. */
export const ifRangeHolds = (ifRange: string | undefined, etag: string): boolean => ifRange === undefined || ifRange.trim() === etag

export const contentRange = (r: ByteRange, size: number): string => `bytes ${r.start}-${r.end}/${size}`
