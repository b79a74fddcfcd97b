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

/** `x::text AS x … ORDER BY x` (not `ORDER BY t.x`), per alias; what it found. */
const textAliasOrderings = (sql: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const m of sql.matchAll(/\b(\w+)::text\s+AS\s+(\w+)\b/gi)) {
    if (m[1] !== m[2]) continue
    if (new RegExp(`ORDER BY(?:[^;]*?[\\s,])?(?<![.\\w])${m[2]}\\b(?!\\s*\\.)`, "i").test(sql)) out.push(m[2]!)
  }
  return out
}

describe("ORDER BY a text alias", () => {
  it("is recognised, and a qualified column is not", () => {
    expect(textAliasOrderings("SELECT seq::text AS seq FROM t ORDER BY seq DESC LIMIT 1")).toEqual(["seq"])
    expect(textAliasOrderings("SELECT id::text AS id FROM t WHERE a = 1 ORDER BY created_at, id")).toEqual(["id"])
    expect(textAliasOrderings("SELECT seq::text AS seq FROM t ORDER BY t.seq DESC")).toEqual([])
    expect(textAliasOrderings("SELECT id::text AS id, seq FROM t ORDER BY seq")).toEqual([])
  })

  it("is nowhere under src/", () => {
    const found = files(join(root, "src")).flatMap((f) =>
      statements(readFileSync(f, "utf8")).flatMap((s) => textAliasOrderings(s).map((col) => `${relative(root, f)}: ORDER BY ${col} sorts its text alias`)))
    expect(found).toEqual([])
  })
})
