// The index document's `signed` list names every signed endpoint (issue 23, point 4): every
// operation of the exchange's OpenAPI document that takes a `signature` parameter is listed, with
// its method and path, and nothing else is.
import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "vitest"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { indexDocument } from "../../../src/exchange/http/publicBodies.ts"

const signedOperations = (): Array<string> => {
  const spec = OpenApi.fromApi(ExchangeApi) as unknown as {
    paths: Record<string, Record<string, { parameters?: ReadonlyArray<{ name: string }> }>>
  }
  const out: Array<string> = []
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (op.parameters?.some((p) => p.name === "signature")) out.push(`${method.toUpperCase()} ${path}`)
    }
  }
  return out.sort()
}

describe("index document", () => {
  it("lists every signed endpoint, and only those", () => {
    const listed = Object.values(indexDocument.signed).map((v) => v.slice(0, v.indexOf("?"))).sort()
    const expected = signedOperations()
    expect(expected.length).toBeGreaterThanOrEqual(8)
    expect(listed).toEqual(expected)
  })
})
