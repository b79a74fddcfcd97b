import { describe, expect, it } from "vitest"
import { entityIdOf, isInvalid, parseAsset, parseCap, parseDuration, parseEntityId } from "../../../src/exchange/authorization/policy.ts"
import { make } from "../../../src/platform/SecretBox.ts"

describe("authorization grant rules", () => {
  it("parses durations and bounds them", () => {
    expect(parseDuration("30s")).toBe(30_000)
    expect(parseDuration("1h30m")).toBe(5_400_000)
    expect(parseDuration("7d")).toBe(7 * 86_400_000)
    expect(isInvalid(parseDuration("500ms"))).toBe(true) // under the 1 s minimum
    expect(isInvalid(parseDuration("400d"))).toBe(true)
    expect(isInvalid(parseDuration("10"))).toBe(true)
    expect(isInvalid(parseDuration("-5s"))).toBe(true)
  })

  it("normalises caps exactly, without floats", () => {
    expect(parseCap("001.500")).toBe("1.5")
    expect(parseCap("100")).toBe("100")
    expect(parseCap("0.000000000000000001")).toBe("0.000000000000000001")
    expect(isInvalid(parseCap("0"))).toBe(true)
    expect(isInvalid(parseCap("0.000"))).toBe(true)
    expect(isInvalid(parseCap("1e3"))).toBe(true)
    expect(isInvalid(parseCap("-1"))).toBe(true)
    expect(isInvalid(parseCap("1.0000000000000000001"))).toBe(true) // 19 decimals
  })

  it("accepts asset codes and round-trips entity ids", () => {
    expect(parseAsset("WLTC")).toBe("WLTC")
    expect(isInvalid(parseAsset("btc"))).toBe(true)
    expect(parseEntityId(entityIdOf(42, "BTC"))).toEqual({ userId: 42, asset: "BTC" })
    expect(isInvalid(parseEntityId("x:BTC"))).toBe(true)
  })
})

describe("secret box", () => {
  const box = make(Buffer.alloc(32, 7))
  it("round-trips and never stores the plain text", () => {
    const sealed = box.seal("my secret")
    expect(sealed).not.toContain("my secret")
    expect(box.open(sealed)).toBe("my secret")
    expect(box.seal("my secret")).not.toBe(sealed) // random nonce
  })
  it("detects tampering and a wrong key", () => {
    const sealed = box.seal("x")
    const parts = sealed.split(":")
    parts[3] = Buffer.from("y").toString("base64")
    expect(() => box.open(parts.join(":"))).toThrow()
    expect(() => make(Buffer.alloc(32, 8)).open(sealed)).toThrow()
  })
})
