// Parameters written in as literals (src/platform/database/sqlLiterals.ts). What they mean to
// Postgres is checked against bound parameters in test/integration/pipelined-transaction.test.ts;
// here, the text itself and what is refused.
import { describe, expect, it } from "vitest"
import { inlined, literal } from "../../../src/platform/database/sqlLiterals.ts"

describe("SQL literals", () => {
  it("writes strings as E'…' with quotes and backslashes doubled", () => {
    expect(literal("abc")).toBe("E'abc'")
    expect(literal("it's")).toBe("E'it''s'")
    expect(literal("a\\b")).toBe("E'a\\\\b'")
    expect(literal("")).toBe("E''")
    expect(literal("'; DROP TABLE orders; --")).toBe("E'''; DROP TABLE orders; --'")
  })

  it("writes numbers bare, negatives in parentheses (never `--`), booleans and null as keywords", () => {
    expect(literal(42)).toBe("42")
    expect(literal(-5)).toBe("(-5)")
    expect(literal(-0)).toBe("(0)")
    expect(literal(1.5)).toBe("1.5")
    expect(literal(12345678901234567890n)).toBe("12345678901234567890")
    expect(literal(-3n)).toBe("(-3)")
    expect(literal(true)).toBe("TRUE")
    expect(literal(false)).toBe("FALSE")
    expect(literal(null)).toBe("NULL")
    expect(`x-${literal(-5)}`).not.toContain("--")
  })

  it("writes arrays as node-postgres sends them: a quoted array literal, every element double-quoted", () => {
    expect(literal(["1", "2"])).toBe(`E'{"1","2"}'`)
    expect(literal([])).toBe(`E'{}'`)
    expect(literal(["a\"b", "c\\d", "e'f", null, "NULL"])).toBe(`E'{"a\\\\"b","c\\\\\\\\d","e''f",NULL,"NULL"}'`)
    expect(literal([true, false, 3])).toBe(`E'{"t","f","3"}'`)
  })

  it("refuses what it cannot write faithfully", () => {
    expect(() => literal("a\u0000b")).toThrow(/NUL/)
    expect(() => literal(Number.NaN)).toThrow()
    expect(() => literal(Number.POSITIVE_INFINITY)).toThrow()
    expect(() => literal({ a: 1 })).toThrow()
    expect(() => literal(new Date(0))).toThrow()
    expect(() => literal([[1]])).toThrow(/nested/)
    expect(() => literal([{}])).toThrow()
  })

  it("replaces placeholders outside quotes only, by number, and refuses one with no parameter", () => {
    expect(inlined("SELECT $1, $2::text[], $10", [1, ["a"], 1, 1, 1, 1, 1, 1, 1, "ten"])).toBe(`SELECT 1, E'{"a"}'::text[], E'ten'`)
    expect(inlined("SELECT '$1', \"$1\", $1", ["x"])).toBe("SELECT '$1', \"$1\", E'x'")
    expect(inlined("SELECT 'it''s $1', $1", [7])).toBe("SELECT 'it''s $1', 7")
    expect(inlined("SELECT $2, $1", ["a", "b"])).toBe("SELECT E'b', E'a'")
    expect(() => inlined("SELECT $3", [1, 2])).toThrow(/no parameter/)
    expect(() => inlined("SELECT 'open", [])).toThrow(/unclosed/)
    // A value that looks like a placeholder is a value: it is not substituted again.
    expect(inlined("SELECT $1, $2", ["$2", "b"])).toBe("SELECT E'$2', E'b'")
  })
})
