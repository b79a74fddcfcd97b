// EVM payout and refund addresses (src/chain/evm/payoutAddress.ts, the one check every unwrap,
// cash-out, saved payout, redeem payout and mint refund address goes through): burn addresses are
// refused with a clear message (issue 27.7), any other valid address is taken.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { evmPayoutAddress } from "../../../src/chain/evm/payoutAddress.ts"
import { evmAddressInput } from "../../../src/desk/cashout/policy.ts"

describe("burn addresses as a payout", () => {
  it("refuses the zero address and 0x…dEaD in any case", () => {
    for (const a of ["0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dEaD", "0x000000000000000000000000000000000000DEAD", " 0x0000000000000000000000000000000000000000 "]) {
      const r = evmPayoutAddress(a)
      expect(Either.isLeft(r), a).toBe(true)
      if (Either.isLeft(r)) expect(r.left.message).toMatch(/burn address/)
    }
    const wire = evmAddressInput("payoutAddress", "0x0000000000000000000000000000000000000000")
    expect(Either.isLeft(wire) && wire.left).toMatch(/^payoutAddress: this is a burn address/)
  })

  it("takes an ordinary address, answered checksummed", () => {
    const r = evmPayoutAddress("0x00000000000000000000000000000000000000aa")
    expect(Either.isRight(r) && r.right.toLowerCase()).toBe("0x00000000000000000000000000000000000000aa")
  })
})
