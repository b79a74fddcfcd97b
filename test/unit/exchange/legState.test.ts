// A settlement leg's next row and its Settlement's next check, from what the ledger and the Omni
// indexer said (src/exchange/settlement/legState.ts).
import { describe, expect, it } from "vitest"
import { afterSighting, checkSlackMs, nextCheckInMs } from "../../../src/exchange/settlement/legState.ts"

const inBlock = (confirmations: number, omni: { valid: true } | { valid: false; reason: string } | undefined) =>
  ({ _tag: "InBlock", confirmations, blockHeight: 200, blockHash: "ab".repeat(32), omni }) as const

describe("afterSighting", () => {
  it("writes nothing when the ledger did not answer", () => {
    expect(afterSighting({ _tag: "Unknown" }, 6)).toBeUndefined()
  })
  it("sends the stored bytes again when the ledger does not know the transaction", () => {
    expect(afterSighting({ _tag: "NotFound" }, 6)).toMatchObject({ status: "broadcast", rebroadcast: true, confirmations: 0, blockHeight: null })
  })
  it("a transaction back in the mempool (reorged out) loses its block", () => {
    expect(afterSighting({ _tag: "InMempool" }, 6)).toEqual({ status: "broadcast", confirmations: 0, blockHeight: null, blockHash: null, failure: null, rebroadcast: false })
  })
  it("is confirmed below the final depth and final at it, once the indexer judged it valid", () => {
    expect(afterSighting(inBlock(1, { valid: true }), 6)).toMatchObject({ status: "confirmed", confirmations: 1, blockHeight: 200 })
    expect(afterSighting(inBlock(5, { valid: true }), 6)?.status).toBe("confirmed")
    expect(afterSighting(inBlock(6, { valid: true }), 6)?.status).toBe("final")
    expect(afterSighting(inBlock(9, undefined), 6)?.status).toBe("confirmed") // the view has not applied that block yet
  })
  it("fails with the indexer's reason an Omni send it judged invalid", () => {
    expect(afterSighting(inBlock(1, { valid: false, reason: "property 9 does not exist" }), 6)).toMatchObject({
      status: "failed", failure: "the Omni indexer judged the send invalid: property 9 does not exist"
    })
  })
})

describe("nextCheckInMs", () => {
  const block = 10_000
  it("looks again after one block while a leg is not in a block", () => {
    expect(nextCheckInMs([{ status: "broadcast", confirmations: 0 }, { status: "confirmed", confirmations: 3 }], 6, block)).toBe(block + checkSlackMs)
  })
  it("waits for the final depth once both legs are confirmed", () => {
    expect(nextCheckInMs([{ status: "confirmed", confirmations: 1 }, { status: "confirmed", confirmations: 2 }], 6, block)).toBe(4 * block + checkSlackMs)
    expect(nextCheckInMs([{ status: "confirmed", confirmations: 7 }, { status: "final", confirmations: 6 }], 6, block)).toBe(block + checkSlackMs)
  })
  it("stops once every leg is final or failed", () => {
    expect(nextCheckInMs([{ status: "final", confirmations: 6 }, { status: "failed", confirmations: 1 }], 6, block)).toBeUndefined()
  })
})
