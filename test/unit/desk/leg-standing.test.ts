// A settled order's ledger leg is final only once it is deep enough and our Omni indexer holds it
// valid: a leg in a block but Omni-invalid (mined before what it depends on, chaos seed 1 at
// 3 minutes) moved no token and must be reported, not counted as done.
import { describe, expect, it } from "vitest"
import type { OmniTxRecord } from "../../../src/chain/omni/indexer.ts"
import { legStanding } from "../../../src/desk/orders/legs.ts"

const record = (valid: boolean, reason?: string): OmniTxRecord => ({
  txid: "ab".repeat(32), height: 100, blockHash: "cd".repeat(32), index: 1, valid, ...(reason === undefined ? {} : { reason })
})

describe("legStanding", () => {
  it("is pending below the final depth, whatever the indexer says", () => {
    expect(legStanding(0, undefined, 6)).toEqual({ _tag: "Pending" })
    expect(legStanding(5, record(true), 6)).toEqual({ _tag: "Pending" })
    expect(legStanding(5, record(false, "sender short"), 6)).toEqual({ _tag: "Pending" })
  })

  it("is pending at the final depth while the indexer is behind", () => {
    expect(legStanding(6, undefined, 6)).toEqual({ _tag: "Pending" })
  })

  it("is final at the final depth when valid, or when the indexer no longer keeps its judgement", () => {
    expect(legStanding(6, record(true), 6)).toEqual({ _tag: "Final" })
    expect(legStanding(40, "forgotten", 6)).toEqual({ _tag: "Final" })
  })

  it("is invalid at the final depth when the indexer holds it invalid, with the reason", () => {
    expect(legStanding(6, record(false, "sender X has 0 of property 6, needs 1000"), 6))
      .toEqual({ _tag: "Invalid", reason: "sender X has 0 of property 6, needs 1000" })
    expect(legStanding(9, record(false), 6)).toEqual({ _tag: "Invalid", reason: "no reason given" })
  })
})
