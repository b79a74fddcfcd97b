// Generated client order ids (OrderHandlers.ts, newClientOrderId) come from a pool of random bytes
// drawn 4 KiB at a time: across refills of the pool every id is still 22 base64url characters of
// its own 16 bytes, none repeats, and none is cut from the pool's seam.
import { describe, expect, it } from "vitest"
import { newClientOrderId } from "../../../src/exchange/http/OrderHandlers.ts"

describe("generated client order ids", () => {
  it("are 22 base64url characters, distinct across several refills of the pool", () => {
    const ids = Array.from({ length: 256 * 5 + 7 }, newClientOrderId)
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
      expect(Buffer.from(id, "base64url")).toHaveLength(16)
    }
    expect(new Set(ids).size).toBe(ids.length)
  })
})
