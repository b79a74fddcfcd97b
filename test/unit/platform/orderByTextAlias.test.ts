// No SQL under src/ sorts by a text alias of a number. Postgres resolves a bare ORDER BY name to
// the output column first, so `SELECT seq::text AS seq … ORDER BY seq DESC` sorts text: "9" above
// "10". That stopped the desk's attestation series at its tenth row (chaos seed 1; regression:
// test/integration/desk-attestation-seq.test.ts) and put social's owed stamps out of order; the
// fix names the table's column (`ORDER BY desk_attestations.seq`). This scans every SQL template
// literal for `<col>::text AS <col>` with an unqualified `ORDER BY <col>` in the same statement.
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "../../..")
const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })

/** The statements of a file: the text of each template literal (a crude cut on backticks is enough for SQL). */
const statements = (text: string): ReadonlyArray<string> => text.split("`").filter((_, i) => i % 2 === 1)

/** The columns a piece of SQL casts to text under their own name (`x::text AS x`, `t.x::text`, `x::text`). */
const textAliases = (sql: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  // `seq::text AS seq`, and `seq::text` or `t.seq::text` alone, whose output column Postgres also names `seq`.
  for (const m of sql.matchAll(/(?<![\w])(?:\w+\.)?(\w+)::text(?:\s+AS\s+(\w+))?(?=\s*(?:,|\bFROM\b|$))/gi)) {
    const alias = m[2] ?? m[1]!
    if (m[1] === alias) out.push(alias)
  }
  return out
}

/** An unqualified `ORDER BY … x` (not `t.x`). */
const ordersBy = (sql: string, column: string) => new RegExp(`ORDER BY(?:[^;]*?[\\s,(])?(?<![.\\w])${column}\\b(?!\\s*\\.)`, "i").test(sql)

/** `x::text AS x … ORDER BY x` (not `ORDER BY t.x`), per alias; what it found. */
const textAliasOrderings = (sql: string): ReadonlyArray<string> => textAliases(sql).filter((c) => ordersBy(sql, c))

/**
 * The same through a column-list fragment of the file (a template with casts and no FROM, such as
 * `const cols = sql\`trade_id::text, …\``) that a statement interpolates: its ORDER BY on such a
 * column, unqualified, sorts text. Crude (any interpolating statement of the file counts), so a
 * false alarm is fixed by qualifying the column, which is always right.
 */
const fragmentOrderings = (stmts: ReadonlyArray<string>): ReadonlyArray<string> => {
  const fragmentColumns = new Set(stmts.filter((s) => !/\bFROM\b/i.test(s)).flatMap(textAliases))
  return stmts.filter((s) => s.includes("${")).flatMap((s) => [...fragmentColumns].filter((c) => ordersBy(s, c)))
}

describe("ORDER BY a text alias", () => {
  it("is recognised, and a qualified column is not", () => {
    expect(textAliasOrderings("SELECT seq::text AS seq FROM t ORDER BY seq DESC LIMIT 1")).toEqual(["seq"])
    expect(textAliasOrderings("SELECT id::text AS id FROM t WHERE a = 1 ORDER BY created_at, id")).toEqual(["id"])
    expect(textAliasOrderings("SELECT seq::text AS seq FROM t ORDER BY t.seq DESC")).toEqual([])
    expect(textAliasOrderings("SELECT id::text AS id, seq FROM t ORDER BY seq")).toEqual([])
    // Without AS the output column keeps the column's name (the chaos checker's attestation read).
    expect(textAliasOrderings("SELECT seq::text, attested_at FROM desk_attestations ORDER BY seq")).toEqual(["seq"])
    expect(textAliasOrderings("SELECT seq::text FROM t ORDER BY t.seq")).toEqual([])
    expect(textAliasOrderings("SELECT t.seq::text, x FROM t ORDER BY seq")).toEqual(["seq"])
    expect(textAliasOrderings("SELECT t.seq::text, x FROM t ORDER BY t.seq")).toEqual([])
  })

  it("is recognised through a column-list fragment", () => {
    const cols = "trade_id::text, market_id, qty::text"
    expect(fragmentOrderings([cols, "SELECT ${cols} FROM trades ORDER BY trade_id DESC"])).toEqual(["trade_id"])
    expect(fragmentOrderings([cols, "SELECT * FROM (SELECT ${cols} FROM trades) u ORDER BY u.trade_id::bigint"])).toEqual([])
  })

  it("is nowhere under src/, harness/ or bench/", () => {
    const found = ["src", "harness", "bench"].flatMap((d) => files(join(root, d))).flatMap((f) =>
      {
        const stmts = statements(readFileSync(f, "utf8"))
        return [...stmts.flatMap(textAliasOrderings), ...fragmentOrderings(stmts)].map((col) => `${relative(root, f)}: ORDER BY ${col} sorts its text alias`)
      })
    expect(found).toEqual([])
  })
})
