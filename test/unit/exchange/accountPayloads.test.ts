// A market batch names all its users in one account notification (AccountReadModel.ts): the
// payloads stay under Postgres's 8,000-byte limit, and every reader gets back exactly the ids.
import { describe, expect, it } from "vitest"
import { accountPayloads, userIdsOf } from "../../../src/exchange/account/AccountReadModel.ts"

describe("account notification payloads", () => {
  it("one id, or several joined by ',', read back as they were", () => {
    expect(userIdsOf("42")).toEqual([42])
    expect(userIdsOf(accountPayloads([1, 22, 333])[0]!)).toEqual([1, 22, 333])
    expect(accountPayloads([])).toEqual([])
  })

  it("names no one for anything but ids", () => {
    expect(userIdsOf("")).toEqual([])
    expect(userIdsOf("x,7,,1.5,-3")).toEqual([7, -3])
    expect(userIdsOf("99999999999999999999")).toEqual([])
  })

  it("splits a huge batch into payloads under 8,000 bytes, losing and repeating no id", () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => 1_000_000_000_000 + i)
    const payloads = accountPayloads(ids)
    expect(payloads.length).toBeGreaterThan(1)
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8_000)
    expect(payloads.flatMap(userIdsOf)).toEqual(ids)
  })
})
