// What a desk key may be (CLI checks) and what it may do (the auth middleware's scope check).
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { checkCallbackUrl, parseFeeBps, parseScopes, scopeRefusal } from "../../../src/desk/keys/policy.ts"
import { base62Token, isBase62Token, sha256Hex } from "../../../src/crypto/token.ts"

describe("desk key policy", () => {
  it("parses scopes in a fixed order and refuses unknown or none", () => {
    expect(parseScopes("wrap, cashout,wrap")).toEqual(Either.right(["cashout", "wrap"]))
    expect(Either.isLeft(parseScopes("cashout,admin"))).toBe(true)
    expect(Either.isLeft(parseScopes(" , "))).toBe(true)
  })

  it("takes fees from 0 to 10000 basis points, integers only", () => {
    expect(parseFeeBps("0")).toEqual(Either.right(0))
    expect(parseFeeBps("10000")).toEqual(Either.right(10000))
    for (const bad of ["10001", "20000", "-1", "1.5", "", "1e3", "00000001"]) expect(Either.isLeft(parseFeeBps(bad)), bad).toBe(true)
  })

  it("takes https callbacks, http only when allowed, never credentials", () => {
    expect(checkCallbackUrl("https://p.example/cb", false)).toEqual(Either.right("https://p.example/cb"))
    expect(Either.isLeft(checkCallbackUrl("http://p.example/cb", false))).toBe(true)
    expect(checkCallbackUrl("http://127.0.0.1:9/cb", true)).toEqual(Either.right("http://127.0.0.1:9/cb"))
    expect(Either.isLeft(checkCallbackUrl("ftp://p.example/cb", true))).toBe(true)
    expect(Either.isLeft(checkCallbackUrl("https://u:p@p.example/cb", false))).toBe(true)
    expect(Either.isLeft(checkCallbackUrl("not a url", true))).toBe(true)
    expect(Either.isLeft(checkCallbackUrl(`https://p.example/${"a".repeat(3000)}`, false))).toBe(true)
  })

  it("refuses a route's scope the key lacks; any live key passes an any-scope route", () => {
    expect(scopeRefusal(["cashout"], "cashout")).toBeUndefined()
    expect(scopeRefusal(["cashout"], undefined)).toBeUndefined()
    expect(scopeRefusal(["cashout", "rewards"], "wrap")).toBe("This API key lacks the wrap scope.")
  })

  it("makes 64-character base62 keys and stores them as lowercase hex SHA-256", () => {
    const key = base62Token()
    expect(isBase62Token(key)).toBe(true)
    expect(isBase62Token(key.slice(1))).toBe(false)
    expect(isBase62Token(key.slice(1) + "-")).toBe(false)
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })
})
