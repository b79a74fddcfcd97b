// The pure parts of social content: the OP_RETURN codec and its 80-byte bound, HTTP ranges,
// hosting states, escaping, and the ids taken from addresses.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { rawCid } from "../../../src/crypto/cid.ts"
import { assetIdOf, postPath, shortIdOf } from "../../../src/social/accounts/socialKeys.ts"
import { parseRange, ifRangeHolds, rangesMax } from "../../../src/social/content/ranges.ts"
import { escapeHtml, excerpt, oembedOf, scriptJson, type PagePost } from "../../../src/social/pages/html.ts"
import { hostingAt, isServed, renewed } from "../../../src/social/posts/hosting.ts"
import { decodeStamp, encodeStamp, opReturnBytesMax, stampTags } from "../../../src/social/posts/opReturn.ts"

const cid = rawCid(Buffer.from("hello"))

describe("OP_RETURN stamps", () => {
  it("encodes <tag>|<cid>|<asset id>.<n base 36> and decodes it back, for every tag", () => {
    for (const tag of stampTags) {
      const text = encodeStamp({ tag, cid, assetId: "AB12CD", seq: 35 })
      expect(text).toBe(`${tag}|${cid}|AB12CD.z`)
      expect(Either.getOrThrow(decodeStamp(Buffer.from(text)))).toEqual({ tag, cid, assetId: "AB12CD", seq: 35 })
    }
  })

  it("stays within 80 bytes at the longest tag and the largest sequence it allows, and asserts beyond", () => {
    const longest = encodeStamp({ tag: "CHV1G", cid, assetId: "ZZZZZZ", seq: 36 ** 7 - 1 })
    expect(Buffer.byteLength(longest)).toBe(opReturnBytesMax)
    expect(() => encodeStamp({ tag: "CHV1G", cid, assetId: "ZZZZZZ", seq: 36 ** 7 })).toThrow(/invariant/)
    expect(() => encodeStamp({ tag: "C", cid, assetId: "abc", seq: 0 })).toThrow(/invariant/)
    expect(() => encodeStamp({ tag: "C", cid: "short", assetId: "ABCDEF", seq: 0 })).toThrow(/invariant/)
  })

  it("refuses what is not one of our stamps", () => {
    for (const text of ["", "C|x|AB12CD.0", `Q|${cid}|AB12CD.0`, `C|${cid}|AB12CD`, `C|${cid}|ab12cd.0`, `C|${cid}|AB12CD.0|x`, "omni\u0000\u0000"]) {
      expect(Either.isLeft(decodeStamp(Buffer.from(text, "latin1"))), text).toBe(true)
    }
    expect(Either.isLeft(decodeStamp(new Uint8Array(81)))).toBe(true)
  })
})

describe("HTTP ranges (RFC 9110 §14)", () => {
  const size = 1000
  it("reads single, open, suffix and multiple ranges, clamped to the size", () => {
    expect(parseRange(undefined, size)).toEqual({ _tag: "Whole" })
    expect(parseRange("bytes=0-1", size)).toEqual({ _tag: "Partial", ranges: [{ start: 0, end: 1 }] })
    expect(parseRange("bytes=990-", size)).toEqual({ _tag: "Partial", ranges: [{ start: 990, end: 999 }] })
    expect(parseRange("bytes=-10", size)).toEqual({ _tag: "Partial", ranges: [{ start: 990, end: 999 }] })
    expect(parseRange("bytes=-5000", size)).toEqual({ _tag: "Partial", ranges: [{ start: 0, end: 999 }] })
    expect(parseRange("bytes=500-99999", size)).toEqual({ _tag: "Partial", ranges: [{ start: 500, end: 999 }] })
    expect(parseRange("bytes=0-9, 20-29", size)).toEqual({ _tag: "Partial", ranges: [{ start: 0, end: 9 }, { start: 20, end: 29 }] })
  })
  it("answers 416 when no range is satisfiable, ignores invalid, reversed, overlapping or too many", () => {
    expect(parseRange("bytes=1000-", size)).toEqual({ _tag: "Unsatisfiable" })
    expect(parseRange("bytes=-0", size)).toEqual({ _tag: "Unsatisfiable" })
    expect(parseRange("bytes=5-1", size)).toEqual({ _tag: "Whole" })
    expect(parseRange("items=0-1", size)).toEqual({ _tag: "Whole" })
    expect(parseRange("bytes=abc", size)).toEqual({ _tag: "Whole" })
    expect(parseRange("bytes=-", size)).toEqual({ _tag: "Whole" })
    expect(parseRange("bytes=0-10,5-20", size)).toEqual({ _tag: "Whole" })
    expect(parseRange("bytes=" + Array.from({ length: rangesMax + 1 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(","), size)).toEqual({ _tag: "Whole" })
    expect(parseRange("bytes=99999999999999999999-", size)).toEqual({ _tag: "Whole" })
    expect(parseRange("bytes=0-0", 0)).toEqual({ _tag: "Unsatisfiable" })
  })
  it("applies a range only when If-Range is the current ETag", () => {
    expect(ifRangeHolds(undefined, "\"a\"")).toBe(true)
    expect(ifRangeHolds("\"a\"", "\"a\"")).toBe(true)
    expect(ifRangeHolds("\"b\"", "\"a\"")).toBe(false)
  })
})

describe("hosting", () => {
  const grace = 100
  it("is hosted until the period ends, in grace for the window, then unpinned", () => {
    const h = { state: "hosted" as const, paidUntilMs: 1000 }
    expect(hostingAt(h, grace, 999)).toEqual({ state: "hosted", dueAtMs: 1000 })
    expect(hostingAt(h, grace, 1000)).toEqual({ state: "grace", dueAtMs: 1100 })
    expect(hostingAt({ ...h, state: "grace" }, grace, 1099)).toEqual({ state: "grace", dueAtMs: 1100 })
    expect(hostingAt({ ...h, state: "grace" }, grace, 1100)).toEqual({ state: "unpinned", dueAtMs: undefined })
    expect(hostingAt(h, 0, 1000)).toEqual({ state: "unpinned", dueAtMs: undefined })
  })
  it("never reopens a taken-down or pulled post; a renewal adds a period from the later of the end and now", () => {
    expect(hostingAt({ state: "taken_down", paidUntilMs: 5000 }, grace, 0)).toEqual({ state: "taken_down", dueAtMs: undefined })
    expect(hostingAt({ state: "moderated", paidUntilMs: 5000 }, grace, 0)).toEqual({ state: "moderated", dueAtMs: undefined })
    expect(renewed({ state: "hosted", paidUntilMs: 1000 }, 500, 200)).toEqual({ state: "hosted", paidUntilMs: 1500 })
    expect(renewed({ state: "grace", paidUntilMs: 1000 }, 500, 1050)).toEqual({ state: "hosted", paidUntilMs: 1550 })
    expect([isServed("hosted"), isServed("grace"), isServed("unpinned"), isServed("taken_down")]).toEqual([true, true, false, false])
  })
})

describe("escaping", () => {
  it("escapes HTML text and attributes, and JSON for a script element", () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\u2028`)).toBe("&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#x2028;")
    const json = scriptJson({ body: "</script><script>x()</script>\u2028\u2029&" })
    expect(json).not.toMatch(/[<>&\u2028\u2029]/)
    expect(JSON.parse(json)).toEqual({ body: "</script><script>x()</script>\u2028\u2029&" })
  })
  it("cuts by code points, never inside a surrogate pair", () => {
    expect(excerpt("😀".repeat(10), 5)).toBe("😀😀😀😀…")
    expect(excerpt("a  b\n c", 10)).toBe("a b c")
  })
  it("keeps oEmbed width and height within maxwidth and maxheight", () => {
    const p: PagePost = { id: "i", shortId: "abcdef", kind: "story", body: "b", tags: [], media: [], authorWallet: "T", authorHandle: null, assetId: "ABCDEF", createdAt: "", state: "hosted",
      proof: { txHash: null, opReturn: null, metadataCid: "c", ownerAddress: "T", derivationPath: "m", explorerTxUrl: null } }
    for (const [w, h] of [[200, 200], [1200, 2000], [undefined, undefined], [333, 250]] as const) {
      const o = oembedOf("http://x", p, w, h)
      expect(o.width).toBeLessThanOrEqual(w ?? Infinity)
      expect(o.height).toBeLessThanOrEqual(h ?? Infinity)
      expect(o.html).toContain(`width="${o.width}" height="${o.height}"`)
    }
  })
})

describe("ids from addresses", () => {
  it("takes the short id from the post address and a 6-character asset id from the identity address", () => {
    expect(shortIdOf("TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K")).toBe("Ss2o2K")
    expect(assetIdOf("TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K")).toMatch(/^[A-Z2-7]{6}$/)
    expect(assetIdOf("TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K", 1)).not.toBe(assetIdOf("TpzDyPgpC23KicTUAPqDSc5VvmRCSs2o2K"))
    expect(postPath(7)).toBe("m/44'/696969'/1101'/7/0/0")
  })
})

describe("lookup cache", () => {
  it("answers what the handler put for lookupCacheMs, per host, and forgets a post on demand", async () => {
    const { makeLookupCache, lookupCacheMs } = await import("../../../src/social/http/LookupCache.ts")
    let now = 0
    const cache = makeLookupCache(() => now)
    cache.put("abcdef", "a:1", "{\"x\":1}")
    expect(cache.get("/api/public/post/abcdef", "a:1")).toEqual({ body: "{\"x\":1}", headers: { "access-control-allow-origin": "*" } })
    expect(cache.get("/api/public/post/abcdef", "b:1")).toBeUndefined()
    expect(cache.get("/api/public/oembed", "a:1")).toBeUndefined()
    now = lookupCacheMs - 1
    expect(cache.get("/api/public/post/abcdef", "a:1")).toBeDefined()
    now = lookupCacheMs
    expect(cache.get("/api/public/post/abcdef", "a:1")).toBeUndefined()
    cache.put("abcdef", "a:1", "{}")
    cache.forget("abcdef")
    expect(cache.get("/api/public/post/abcdef", "a:1")).toBeUndefined()
  })
})
