// Cash-out's pure rules: coupons only lower the fee and never apply when expired or used up; wire
// amounts become base units exactly (a JSON number's digits, never more decimals than the asset
// has, no exponent forms); addresses by their rules.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { amountBase, applyCoupon, evmAddressInput, feePercent, ledgerAddressInput, memberFeeBps, normalizeCouponCode, parseCouponFee, parseUses } from "../../../src/desk/cashout/policy.ts"
import { defaultTokens } from "../../../src/desk/tokens/registry.ts"

const now = new Date("2026-11-24T04:00:00Z")
const coupon = (feeBps: number, more: Partial<{ usesMax: number | null; uses: number; expiresAt: Date | null }> = {}) =>
  ({ code: "C1", feeBps, usesMax: null, uses: 0, expiresAt: null, ...more })

describe("coupons", () => {
  it("lower the fee and never raise it", () => {
    expect(applyCoupon(coupon(5), 10, now)).toEqual({ valid: true, feeBps: 5, lowers: true })
    expect(applyCoupon(coupon(50), 10, now)).toEqual({ valid: true, feeBps: 10, lowers: false })
    expect(applyCoupon(coupon(10), 10, now)).toEqual({ valid: true, feeBps: 10, lowers: false })
  })
  it("are refused when unknown, expired or used up", () => {
    expect(applyCoupon(undefined, 10, now)).toEqual({ valid: false, reason: "no such coupon" })
    expect(applyCoupon(coupon(1, { expiresAt: now }), 10, now)).toEqual({ valid: false, reason: "the coupon has expired" })
    expect(applyCoupon(coupon(1, { expiresAt: new Date(now.getTime() + 1) }), 10, now).valid).toBe(true)
    expect(applyCoupon(coupon(1, { usesMax: 2, uses: 2 }), 10, now)).toEqual({ valid: false, reason: "the coupon is used up" })
    expect(applyCoupon(coupon(1, { usesMax: 2, uses: 1 }), 10, now).valid).toBe(true)
  })
  it("have codes of 3 to 40 letters, digits, _ or -, matched in any case", () => {
    expect(normalizeCouponCode(" half-5 ")).toEqual(Either.right("HALF-5"))
    for (const bad of ["ab", "a b", "x".repeat(41), "été"]) expect(Either.isLeft(normalizeCouponCode(bad))).toBe(true)
    expect(parseCouponFee("10000")).toEqual(Either.right(10000))
    expect(Either.isLeft(parseCouponFee("10001"))).toBe(true)
    expect(Either.isLeft(parseCouponFee("1.5"))).toBe(true)
    expect(parseUses("3")).toEqual(Either.right(3))
    expect(Either.isLeft(parseUses("0"))).toBe(true)
  })
})

describe("fees", () => {
  it("are the negotiated fee, else the token's redeem fee", () => {
    const susd = defaultTokens[0]!
    expect(memberFeeBps(susd, null)).toBe(susd.feeOutBps)
    expect(memberFeeBps(susd, 0)).toBe(0)
    expect(memberFeeBps(susd, 7)).toBe(7)
    expect(feePercent(7)).toBe(0.07)
  })
})

describe("wire amounts", () => {
  it("take a JSON number's digits or a decimal string, exactly", () => {
    expect(amountBase(25.5)).toEqual(Either.right(2_550_000_000n))
    expect(amountBase("0.00000001")).toEqual(Either.right(1n))
    expect(amountBase(0.1)).toEqual(Either.right(10_000_000n))
    expect(amountBase(1234567.12345678)).toEqual(Either.right(123_456_712_345_678n))
    expect(amountBase("1.5", 6)).toEqual(Either.right(1_500_000n))
  })
  it("refuse too many decimals, exponents, signs, zero and non-finite numbers", () => {
    for (const bad of [0.123456789, "1.123456789", 1e21, 1e-9, "1e3", -1, 0, "0", Number.NaN, Number.POSITIVE_INFINITY, " ", "1,5"]) {
      expect(Either.isLeft(amountBase(bad as number | string)), String(bad)).toBe(true)
    }
    expect(Either.isLeft(amountBase("1.1234567", 6))).toBe(true)
  })
})

describe("addresses", () => {
  it("EVM payout addresses: 0x and 40 hex, EIP-55 checked when mixed case, answered checksummed", () => {
    expect(evmAddressInput("payoutAddress", "0x52908400098527886e0f7030069857d2e4169ee7")).toEqual(Either.right("0x52908400098527886E0F7030069857D2E4169EE7"))
    expect(Either.isLeft(evmAddressInput("payoutAddress", "0x52908400098527886e0F7030069857D2E4169EE7"))).toBe(true)
    expect(Either.isLeft(evmAddressInput("payoutAddress", "xpub6CUGRUonZSQ4TWtTMmzXdrXDtypWKiKrhko4egpiMZbpiaQL2jkwSB1icqYh2cfDfVxdx4df189oLKnC5fSwqPfgyP3hooxujYzAu3fDVmz"))).toBe(true)
  })
  it("ledger addresses by the ledger address rule: bech32 pointed to the legacy T address", () => {
    const r = ledgerAddressInput("recipient", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx")
    expect(Either.isLeft(r) && r.left).toMatch(/^recipient: .*legacy address starting with T/)
  })
})
