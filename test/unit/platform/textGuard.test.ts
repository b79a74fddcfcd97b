// Text no route takes (src/platform/http/textGuard.ts): deep JSON, NUL, unpaired surrogates.
import { describe, expect, it } from "vitest"
import { jsonDepthMax, refusedJson, refusedUrlText } from "../../../src/platform/http/textGuard.ts"

describe("refusedJson", () => {
  it("takes ordinary bodies, escapes and paired surrogates", () => {
    for (const ok of ['{"a":[1,{"b":"c"}]}', '{"a":"\\\\u0000"}', '{"e":"\\ud83d\\ude00"}', '"😀"', '{"q":"\\"[[[["}', "", "not json"]) {
      expect(refusedJson(ok), ok).toBeUndefined()
    }
  })

  it("refuses nesting past the limit, and only past it", () => {
    const nest = (n: number) => "[".repeat(n) + "]".repeat(n)
    expect(refusedJson(nest(jsonDepthMax))).toBeUndefined()
    expect(refusedJson(nest(jsonDepthMax + 1))).toMatch(/nested deeper than 64/)
    expect(refusedJson(`{"a":${nest(10_000)}}`)).toMatch(/nested deeper/)
    // Brackets inside strings are text, not nesting.
    expect(refusedJson(`{"a":"${"[".repeat(1000)}"}`)).toBeUndefined()
  })

  it("refuses a NUL, raw or escaped", () => {
    expect(refusedJson('{"a":"x\\u0000"}')).toMatch(/NUL/)
    expect(refusedJson('{"a":"x\u0000"}')).toMatch(/NUL/)
  })

  it("refuses an unpaired surrogate, raw or escaped, high or low", () => {
    expect(refusedJson('{"a":"\\ud800"}')).toMatch(/unpaired/)
    expect(refusedJson('{"a":"\\ud800x"}')).toMatch(/unpaired/)
    expect(refusedJson('{"a":"\\udc00"}')).toMatch(/unpaired/)
    expect(refusedJson('{"a":"\\ude00\\ud83d"}')).toMatch(/unpaired/)
    expect(refusedJson('{"a":"\ud800"}')).toMatch(/unpaired/)
    expect(refusedJson('{"a":"\udc00"}')).toMatch(/unpaired/)
  })
})

describe("refusedUrlText", () => {
  it("refuses %00 and nothing else", () => {
    expect(refusedUrlText("/api/public/timeline/%00")).toMatch(/NUL/)
    expect(refusedUrlText("a=b%00c")).toMatch(/NUL/)
    expect(refusedUrlText("/api/public/timeline/%2500")).toBeUndefined()
    expect(refusedUrlText("a=%C3%A9")).toBeUndefined()
  })
})
