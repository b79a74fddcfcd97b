// The refund rules of mint and wrap deposits and the cross-node nonce rule, pure: who is
// refunded, how much gas a deposit address is given, what a coin refund pays after its fee.
import { describe, expect, it } from "vitest"
import { nextNonce } from "../../../src/desk/orders/nonceLock.ts"
import { coinRefundValue, ethRefundValue, gasTopUp, mintRefundTo, p2pkhSweepVsize, refundable } from "../../../src/desk/orders/refunds.ts"

describe("mint and wrap refund rules", () => {
  it("a mint goes back to its refundAddress, else to the deposit's sender", () => {
    const sender = "0x52908400098527886E0F7030069857D2E4169EE7"
    const refund = "0xde709f2102306220921060314715629080e2fb77"
    expect(mintRefundTo(refund, sender)).toEqual({ to: refund, source: "refundAddress" })
    expect(mintRefundTo(null, sender)).toEqual({ to: sender, source: "sender" })
    // Minted straight to the order's address: no sender to return to.
    expect(mintRefundTo(null, "0x" + "0".repeat(40))).toBeUndefined()
    expect(mintRefundTo(refund, "0x" + "0".repeat(40))).toEqual({ to: refund, source: "refundAddress" })
  })

  it("only a wrap without a refundAddress cannot refund by itself", () => {
    expect(refundable("wrap", null)).toBe(false)
    expect(refundable("wrap", null, "btc")).toBe(false)
    // An ETH wrap's deposit comes from an account: its sender is where it goes back.
    expect(refundable("wrap", null, "ethereum")).toBe(true)
    expect(ethRefundValue(10n ** 17n, 21_000n * 2_000_000_000n)).toBe(10n ** 17n - 42_000_000_000_000n)
    expect(ethRefundValue(42_000n, 42_000n)).toBeUndefined()
    expect(ethRefundValue(1n, 42_000n)).toBeUndefined()
    expect(refundable("wrap", "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn")).toBe(true)
    for (const kind of ["mint", "cashout", "redeem", "unwrap"] as const) expect(refundable(kind, null)).toBe(true)
  })

  it("tops a deposit address up to twice the transfer's fee, less what it holds", () => {
    expect(gasTopUp(60_000n, 2_000_000_000n, 0n)).toBe(240_000_000_000_000n)
    expect(gasTopUp(60_000n, 2_000_000_000n, 40_000_000_000_000n)).toBe(200_000_000_000_000n)
    expect(gasTopUp(60_000n, 2_000_000_000n, 240_000_000_000_000n)).toBe(0n)
    expect(gasTopUp(60_000n, 2_000_000_000n, 10n ** 18n)).toBe(0n)
  })

  it("a coin refund pays the deposit less the network fee, refused below dust", () => {
    expect(p2pkhSweepVsize(1)).toBe(193n)
    expect(coinRefundValue(50_000_000n, 1, 1n, 546n)).toBe(50_000_000n - 193n)
    expect(coinRefundValue(100_000n, 2, 10n, 546n)).toBe(100_000n - 3420n)
    expect(coinRefundValue(739n, 1, 1n, 546n)).toBe(546n)
    expect(coinRefundValue(738n, 1, 1n, 546n)).toBeUndefined()
  })
})

describe("cross-node nonce choice", () => {
  it("signs past every recorded nonce of the sender, never below the node's pending nonce", () => {
    expect(nextNonce(7, null)).toBe(7)
    expect(nextNonce(7, 3)).toBe(7)
    expect(nextNonce(7, 6)).toBe(7)
    expect(nextNonce(7, 7)).toBe(8)
    expect(nextNonce(7, 11)).toBe(12)
  })
})
