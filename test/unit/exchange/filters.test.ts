import { describe, expect, it } from "vitest"
import { checkOrder, compileFilters, type FilterSpec, formatNotional, type MarketFilters } from "../../../src/exchange/filters.ts"

const spec: FilterSpec = {
  tickSize: "0.01000000",
  minPrice: "0.01000000",
  maxPrice: "1000000.00000000",
  stepSize: "0.00001000",
  minQty: "0.00001000",
  maxQty: "9000.00000000",
  minNotional: "5.00000000",
  maxNotional: "9000000.00000000"
}

const compiled = (s: FilterSpec): MarketFilters => {
  const r = compileFilters(s)
  if (r._tag !== "Compiled") throw new Error(r.reason)
  return r.filters
}

const f = compiled(spec)
const failure = (filter: string) => ({ _tag: "FilterFailure", filter, message: `Filter failure: ${filter}` })

describe("filters before the book", () => {
  it("passes a valid order as integer ticks and lots", () => {
    expect(checkOrder(f, "60000.01", "0.00100")).toEqual({ _tag: "Passed", price: 6000001, qty: 100 })
    expect(checkOrder(f, "0.01", "900")).toEqual({ _tag: "Passed", price: 1, qty: 90000000 })
  })

  it("PRICE_FILTER: tick multiples between min and max price", () => {
    expect(checkOrder(f, "60000.005", "1")).toEqual(failure("PRICE_FILTER"))
    expect(checkOrder(f, "0", "1")).toEqual(failure("PRICE_FILTER"))
    expect(checkOrder(f, "1000000.00", "0.00001")).toEqual({ _tag: "Passed", price: 100000000, qty: 1 }) // max price itself
    expect(checkOrder(f, "1000000.01", "0.00001")).toEqual(failure("PRICE_FILTER"))
  })

  it("LOT_SIZE: step multiples between min and max quantity", () => {
    expect(checkOrder(f, "60000", "0.000015")).toEqual(failure("LOT_SIZE"))
    expect(checkOrder(f, "60000", "0")).toEqual(failure("LOT_SIZE"))
    expect(checkOrder(f, "1000", "9000")).toMatchObject({ _tag: "Passed", qty: 900000000 })
    expect(checkOrder(f, "1000", "9000.00001")).toEqual(failure("LOT_SIZE"))
  })

  it("NOTIONAL: price × quantity between min and max, exactly", () => {
    expect(checkOrder(f, "5000", "0.001")).toMatchObject({ _tag: "Passed" }) // exactly 5
    expect(checkOrder(f, "4999.99", "0.001")).toEqual(failure("NOTIONAL")) // 4.99999
    expect(checkOrder(f, "1000", "9000")).toMatchObject({ _tag: "Passed" }) // exactly 9,000,000
    expect(checkOrder(f, "1000.01", "9000")).toEqual(failure("NOTIONAL"))
    const noMax = compiled({ ...spec, maxNotional: "0" })
    expect(checkOrder(noMax, "1000000", "9000")).toMatchObject({ _tag: "Passed" })
  })

  it("answers malformed numbers separately (-1100), naming the parameter", () => {
    expect(checkOrder(f, "1e3", "1")).toMatchObject({ _tag: "Malformed", param: "price" })
    expect(checkOrder(f, "100", "-1")).toMatchObject({ _tag: "Malformed", param: "quantity" })
  })

  it("formats the quote amount of a fill exactly", () => {
    expect(formatNotional(f, 6000001, 100)).toBe("60.0000100") // 60000.01 × 0.001
  })

  it("refuses a spec whose bounds are not whole units", () => {
    expect(compileFilters({ ...spec, minPrice: "0.005" })._tag).toBe("InvalidSpec")
    expect(compileFilters({ ...spec, tickSize: "0" })._tag).toBe("InvalidSpec")
    expect(compileFilters({ ...spec, minQty: "10000" })._tag).toBe("InvalidSpec") // min > max
    expect(compileFilters({ ...spec, maxPrice: "100000000000000000000", tickSize: "0.00001" })._tag).toBe("InvalidSpec") // > 2^53 ticks
    expect(compileFilters({ ...spec, minNotional: "10000000" })._tag).toBe("InvalidSpec")
  })
})
