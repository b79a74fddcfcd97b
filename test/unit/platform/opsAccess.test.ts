import { describe, expect, it } from "vitest"
import { checkOpsAccess, cookieValue, opsCookieValue, opsSetCookie } from "../../../src/platform/http/opsAccess.ts"

describe("ops access", () => {
  it("is open when no token is configured", () => {
    expect(checkOpsAccess(undefined, undefined)).toEqual({ allowed: true })
    expect(checkOpsAccess(undefined, "Bearer anything")).toEqual({ allowed: true })
  })

  it("needs the exact bearer token when one is configured", () => {
    expect(checkOpsAccess("s3cret-token", "Bearer s3cret-token")).toEqual({ allowed: true })
    expect(checkOpsAccess("s3cret-token", "bearer   s3cret-token")).toEqual({ allowed: true })
    expect(checkOpsAccess("s3cret-token", undefined)).toEqual({ allowed: false, reason: "missing" })
    expect(checkOpsAccess("s3cret-token", "Basic czNjcmV0")).toEqual({ allowed: false, reason: "missing" })
    expect(checkOpsAccess("s3cret-token", "Bearer")).toEqual({ allowed: false, reason: "missing" })
    expect(checkOpsAccess("s3cret-token", "Bearer s3cret-tokeN")).toEqual({ allowed: false, reason: "wrong" })
    expect(checkOpsAccess("s3cret-token", "Bearer s3cret-token-and-more")).toEqual({ allowed: false, reason: "wrong" })
    expect(checkOpsAccess("s3cret-token", "Bearer s3cret")).toEqual({ allowed: false, reason: "wrong" })
  })

  it("takes the page's cookie where it is offered, never the token itself as a cookie", () => {
    const good = `shardline_ops=${opsCookieValue("s3cret-token")}`
    expect(checkOpsAccess("s3cret-token", undefined, good)).toEqual({ allowed: true })
    expect(checkOpsAccess("s3cret-token", undefined, `theme=dark; ${good}; other=1`)).toEqual({ allowed: true })
    // Where no cookie is offered (/metrics), it does not count.
    expect(checkOpsAccess("s3cret-token", undefined)).toEqual({ allowed: false, reason: "missing" })
    expect(checkOpsAccess("s3cret-token", undefined, "shardline_ops=s3cret-token")).toEqual({ allowed: false, reason: "wrong" })
    expect(checkOpsAccess("s3cret-token", undefined, `shardline_ops=${opsCookieValue("other-token")}`)).toEqual({ allowed: false, reason: "wrong" })
    expect(checkOpsAccess("s3cret-token", undefined, "shardline_opsx=1; theme=dark")).toEqual({ allowed: false, reason: "missing" })
    // A bearer token, when sent, decides alone.
    expect(checkOpsAccess("s3cret-token", "Bearer wrong", good)).toEqual({ allowed: false, reason: "wrong" })
    expect(checkOpsAccess(undefined, undefined, "shardline_ops=anything")).toEqual({ allowed: true })
  })

  it("sets a session cookie for /ops only, HttpOnly and SameSite=Strict, that is not the token", () => {
    const header = opsSetCookie("s3cret-token")
    expect(header).toMatch(/^shardline_ops=[A-Za-z0-9_-]{43}; Path=\/ops; HttpOnly; SameSite=Strict$/)
    expect(header).not.toContain("s3cret-token")
    expect(opsCookieValue("s3cret-token")).not.toBe(opsCookieValue("s3cret-tokeN"))
    expect(cookieValue("a=1; b = 2 ;c=3=4", "b")).toBe("2")
    expect(cookieValue("a=1; c=3=4", "c")).toBe("3=4")
    expect(cookieValue(undefined, "a")).toBeUndefined()
  })
})
