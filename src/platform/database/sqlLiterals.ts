// A compiled statement with its parameters written in as SQL literals, for Postgres' simple query
// protocol, which takes no parameters but does take several statements in one round trip
// (pipelinedTransaction.ts says why we want that). Only the values our statements bind are
// accepted: strings, finite numbers, bigints, booleans, null, and flat arrays of those (as
// node-postgres would send them: an array literal, each element quoted). Anything else is a
// defect, never a guess.
//
// Strings are written as E'…' with backslashes and quotes doubled, so the text means the same
// whatever `standard_conforming_strings` says. A NUL cannot be in a Postgres text value at all
// (a bound parameter with one fails too), so it is refused here before it is sent.

/** A value as a SQL literal. */
export const literal = (value: unknown): string => {
  if (value === null || value === undefined) return "NULL"
  switch (typeof value) {
    case "string":
      return quoted(value)
    case "boolean":
      return value ? "TRUE" : "FALSE"
    case "bigint":
      return value < 0n ? `(${value})` : String(value)
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`sqlLiterals: ${value} has no SQL literal`)
      // Parenthesised when negative: `x-$1` must not become the comment `x--5`.
      return value < 0 || Object.is(value, -0) ? `(${value})` : String(value)
  }
  if (Array.isArray(value)) return quoted(arrayText(value))
  throw new TypeError(`sqlLiterals: a parameter of type ${Object.prototype.toString.call(value)} is not written as a literal`)
}

const needsArrayEscape = /[\\"]/
const needsStringEscape = /[\\'\u0000]/

/** A Postgres array's text form, as node-postgres sends an array parameter: every element double-quoted. */
const arrayText = (values: ReadonlyArray<unknown>): string => {
  const parts = values.map((v) => {
    if (v === null || v === undefined) return "NULL"
    if (Array.isArray(v)) throw new TypeError("sqlLiterals: nested arrays are not written as literals")
    const text = typeof v === "string" ? v
      : typeof v === "number" || typeof v === "bigint" ? String(v)
      : typeof v === "boolean" ? (v ? "t" : "f")
      : undefined
    if (text === undefined) throw new TypeError(`sqlLiterals: an array element of type ${typeof v} is not written as a literal`)
    return needsArrayEscape.test(text) ? `"${text.replace(/\\/g, "\\\\").replace(/"/g, "\\\"")}"` : `"${text}"`
  })
  return `{${parts.join(",")}}`
}

const quoted = (text: string): string => {
  if (!needsStringEscape.test(text)) return `E'${text}'`
  if (text.includes("\u0000")) throw new TypeError("sqlLiterals: a NUL character cannot be sent to Postgres")
  return `E'${text.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`
}

/** A quoted run ('…' or "…", doubled quotes inside) or a placeholder: one native scan of the text. */
const token = /'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\d+)|['"]/g

/**
 * `text` with each `$n` placeholder replaced by the literal of `params[n - 1]`. Placeholders are
 * looked for outside quoted text only ('…' and "…"), so a `$1` inside a string of the statement
 * itself stays as it is.
 */
export const inlined = (text: string, params: ReadonlyArray<unknown>): string =>
  text.replace(token, (match: string, n: string | undefined) => {
    if (n === undefined) {
      if (match.length === 1) throw new TypeError("sqlLiterals: a statement with an unclosed quote")
      return match
    }
    const i = Number(n)
    if (i < 1 || i > params.length) throw new TypeError(`sqlLiterals: $${i} has no parameter (${params.length} given)`)
    return literal(params[i - 1])
  })
