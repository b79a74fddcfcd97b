import { describe, expect, it } from "vitest"
import { legRefusals } from "../../../harness/legRefusals.ts"

describe("legRefusals", () => {
  it("counts refused legs by code and reason, most first, and nothing else", () => {
    const lines = [
      `timestamp=2026-12-01T03:52:34.752Z level=WARN fiber=#1 message="leg 112:quote not broadcast: invalid (too-long-mempool-chain, too many descendants for tx 64a7 [limit: 25]); its stored bytes are sent again later"`,
      `timestamp=2026-12-01T03:52:34.784Z level=WARN fiber=#2 message="leg 113:quote not broadcast: missing-inputs (bad-txns-inputs-missingorspent); its stored bytes are sent again later"`,
      `timestamp=2026-12-01T03:52:34.785Z level=WARN fiber=#2 message="leg 114:base not broadcast: missing-inputs (bad-txns-inputs-missingorspent); its stored bytes are sent again later"`,
      `timestamp=2026-12-01T03:52:36.900Z level=WARN fiber=#3 message="market BXBDUSD trade 112 base: rebroadcast of 2494 refused: bad-txns-inputs-missingorspent"`,
      `timestamp=2026-12-01T03:52:39.355Z level=INFO fiber=#4 message="market BXADUSD trade 111 base: db51 was not on the ledger; sent its stored bytes again"`
    ]
    expect(legRefusals(lines)).toEqual([
      { code: "missing-inputs", reason: "bad-txns-inputs-missingorspent", legs: 2 },
      { code: "invalid", reason: "too-long-mempool-chain", legs: 1 }
    ])
    expect(legRefusals([])).toEqual([])
  })
})
