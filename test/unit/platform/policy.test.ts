import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { entityIdOf, parseAsset, parseCap, parseDuration, parseEntityId } from "../../../src/exchange/authorization/policy.ts"
import { make } from "../../../src/platform/SecretBox.ts"

describe("authorization grant rules", () => {
  it("parses durations and bounds them", () => {
    expect(parseDuration("30s")).toEqual(Either.right(30_000))
    expect(parseDuration("1h30m")).toEqual(Either.right(5_400_000))
    expect(parseDuration("7d")).toEqual(Either.right(7 * 86_400_000))
    expect(Either.isLeft(parseDuration("500ms"))).toBe(true) // under the 1 s minimum
    expect(Either.isLeft(parseDuration("400d"))).toBe(true)
    expect(Either.isLeft(parseDuration("10"))).toBe(true)
    expect(Either.isLeft(parseDuration("-5s"))).toBe(true)
  })

  it("normalises caps exactly, without floats", () => {
    expect(parseCap("001.500")).toEqual(Either.right("1.5"))
    expect(parseCap("100")).toEqual(Either.right("100"))
    expect(parseCap("0.000000000000000001")).toEqual(Either.right("0.000000000000000001"))
    expect(Either.isLeft(parseCap("0"))).toBe(true)
    expect(Either.isLeft(parseCap("0.000"))).toBe(true)
    expect(Either.isLeft(parseCap("1e3"))).toBe(true)
    expect(Either.isLeft(parseCap("-1"))).toBe(true)
    expect(Either.isLeft(parseCap("1.0000000000000000001"))).toBe(true) // 19 decimals
  })

  it("accepts asset codes and round-trips entity ids", () => {
    expect(parseAsset("WLTC")).toEqual(Either.right("WLTC"))
    expect(Either.isLeft(parseAsset("btc"))).toBe(true)
    expect(parseEntityId(entityIdOf(42, "BTC"))).toEqual(Either.right({ userId: 42, asset: "BTC" }))
    expect(Either.isLeft(parseEntityId("x:BTC"))).toBe(true)
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
