import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { IntMap } from "../../../src/exchange/intmap.ts"

describe("IntMap", () => {
  it("behaves like a Map under random set/delete, with colliding and large keys", () => {
    const key = fc.oneof(
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 1, max: 64 }).map((k) => k * 2 ** 20), // same low bits
      fc.integer({ min: 1, max: 64 }).map((k) => 2 ** 40 + k * 2 ** 32), // high bits only differ
      fc.constant(Number.MAX_SAFE_INTEGER)
    )
    const op = fc.tuple(fc.constantFrom("set", "delete"), key, fc.integer({ min: 0, max: 2 ** 31 - 1 }))
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const m = new IntMap(4)
        const ref = new Map<number, number>()
        for (const [kind, k, v] of ops) {
          if (kind === "set") {
            m.set(k, v)
            ref.set(k, v)
          } else expect(m.delete(k)).toBe(ref.delete(k))
          expect(m.size).toBe(ref.size)
        }
        for (const [k, v] of ref) expect(m.get(k)).toBe(v)
        expect(m.get(0)).toBe(-1)
        expect(m.get(12345)).toBe(ref.get(12345) ?? -1)
        const seen = new Map<number, number>()
        m.forEach((v, k) => seen.set(k, v))
        expect(seen).toEqual(ref)
      }),
      { numRuns: 300 }
    )
  })
})
