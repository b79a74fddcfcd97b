// The desk's registry rules and settings without I/O: a change to a token, and the stablecoin
// contracts setting of the reserves scan.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { applyChange, defaultTokens, isLive, registryView } from "../../../src/desk/tokens/registry.ts"

const susd = defaultTokens.find((t) => t.code === "SUSD")!
const wbtc = defaultTokens.find((t) => t.code === "wBTC")!

describe("token registry changes", () => {
  it("applies limits, fees, confirmations and a property; a token is live only with its property", () => {
    const changed = Either.getOrThrow(applyChange(wbtc, { minAmount: "0.001", feeInBps: "25", requiredConfirmations: "3", propertyId: "8", live: "true" }))
    expect(registryView(changed)).toEqual({
      code: "wBTC", kind: "wrapped", baseAsset: "BTC", name: wbtc.name, propertyId: 8, minAmount: "0.001", maxAmount: "10",
      wrapFeeBps: 25, unwrapFeeBps: 10, requiredConfirmations: 3, live: true
    })
    expect(isLive(changed)).toBe(true)
    expect(isLive({ ...changed, propertyId: null })).toBe(false)
  })

  it("refuses what cannot be, in one line, naming the flag", () => {
    const refused = (change: Parameters<typeof applyChange>[1], token = susd) => Either.flip(applyChange(token, change)).pipe(Either.getOrThrow)
    expect(refused({ live: "true" })).toBe("SUSD has no Omni property yet: give it with --property ID before --live true")
    expect(refused({ feeOutBps: "-1" })).toMatch(/--redeem-fee-bps must be an integer from 0 to 10000/)
    expect(refused({ feeInBps: "10001" }, wbtc)).toMatch(/--wrap-fee-bps must be an integer from 0 to 10000/)
    expect(refused({ maxAmount: "5" })).toBe("the maximum (5) is below the minimum (10)")
    expect(refused({ minAmount: "1e3" })).toMatch(/^--min: amount "1e3" is not a plain positive decimal/)
    expect(refused({ propertyId: "0" })).toMatch(/--property must be an integer from 1/)
    expect(refused({ requiredConfirmations: "0" }, wbtc)).toMatch(/--confirmations must be an integer from 1 to 1000/)
  })
})
