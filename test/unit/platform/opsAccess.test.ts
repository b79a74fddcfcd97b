import { describe, expect, it } from "vitest"
import { checkOpsAccess } from "../../../src/platform/http/opsAccess.ts"

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
})
