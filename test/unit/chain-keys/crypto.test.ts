import { Either } from "effect"
import { createHash, createHmac } from "node:crypto"
import fc from "fast-check"
import { CID } from "multiformats/cid"
import { base58btc } from "multiformats/bases/base58"
import { describe, expect, it } from "vitest"
import { canonicalHash, canonicalJson, canonicalNumber } from "../../../src/crypto/canonicalJson.ts"
import { cidMatches, CID_TEXT_LENGTH, parseRawCid, rawCid } from "../../../src/crypto/cid.ts"
import { constantTimeEqual, hmacSha256Hex, verifyHmacSha256Hex } from "../../../src/crypto/hmac.ts"

// RFC 4648 base32, lower case, no padding: an independent encoder for the CID layout check.
const base32 = (bytes: Uint8Array): string => {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
  let bits = 0
  let value = 0
  let out = ""
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31]
  return out
}
const handBuilt = (bytes: Uint8Array): string =>
  "b" + base32(Buffer.concat([Buffer.of(0x01, 0x55, 0x12, 0x20), createHash("sha256").update(bytes).digest()]))

describe("content ids (CIDv1, raw, sha2-256, base32)", () => {
  it("matches the known vectors", () => {
    expect(rawCid(new Uint8Array())).toBe("bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku")
    expect(rawCid(new TextEncoder().encode("hello world"))).toBe("bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e")
  })

  it("equals 'b' + base32(01 55 12 20 ‖ sha256) for any bytes, 59 characters", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const cid = rawCid(bytes)
        return cid === handBuilt(bytes) && cid.length === CID_TEXT_LENGTH
      }),
      { numRuns: 200, seed: 3 }
    )
  })

  it("parses only our profile and normalises other bases to base32", () => {
    const bytes = new TextEncoder().encode("post body")
    const cid = rawCid(bytes)
    const asBase58 = CID.parse(cid).toString(base58btc)
    expect(asBase58.startsWith("z")).toBe(true)
    expect(parseRawCid(asBase58)).toMatchObject({ right: { cid } })
    expect(parseRawCid("QmdfTbBqBPQ7VNxZEYEj14VmRuZBkqFbiwReogJgS1zR1n")).toMatchObject({ left: { message: expect.stringMatching(/CIDv1/) } })
    const dagPb = CID.create(1, 0x70, CID.parse(cid).multihash).toString()
    expect(parseRawCid(dagPb)).toMatchObject({ left: { message: expect.stringMatching(/not raw/) } })
    expect(Either.isLeft(parseRawCid(""))).toBe(true)
    expect(Either.isLeft(parseRawCid("not a cid"))).toBe(true)
    expect(Either.isLeft(parseRawCid("b".repeat(500)))).toBe(true)
    expect(cidMatches(cid, bytes)).toBe(true)
    expect(cidMatches(asBase58, bytes)).toBe(true)
    expect(cidMatches(cid, new TextEncoder().encode("post body!"))).toBe(false)
    expect(cidMatches("garbage", bytes)).toBe(false)
  })
})

describe("canonical JSON (desk spec)", () => {
  it("golden vectors", () => {
    const vectors: Array<[Parameters<typeof canonicalJson>[0], string]> = [
      [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
      [{ z: { y: [3, { d: null, c: true }], x: "é" }, a: [] }, '{"a":[],"z":{"x":"é","y":[3,{"c":true,"d":null}]}}'],
      [{ xpub: "Tpub…", address: "T…", nonce: "n1", issued_at: 1700000000 }, '{"address":"T…","issued_at":1700000000,"nonce":"n1","xpub":"Tpub…"}'],
      [{ reserve: 1234.5678901, supply: 2.0, ratio: 0.1 + 0.2 }, '{"ratio":0.3,"reserve":1234.56789,"supply":2}'],
      [[NaN, Infinity, -Infinity, -0, 1e-7, -1e-7, 1.0000005, 123456789.1234565], "[null,null,null,0,0,0,1.000001,123456789.123456]"],
      [{ a: undefined, b: [undefined, 1] }, '{"b":[null,1]}'],
      [{ B: 1, a: 2, "": 3, "10": 4, "9": 5 }, '{"":3,"10":4,"9":5,"B":1,"a":2}'],
      ['line\nquote"back\\slash', '"line\\nquote\\"back\\\\slash"'],
      [null, "null"],
      [1e21, "1e+21"]
    ]
    for (const [value, expected] of vectors) expect(canonicalJson(value)).toBe(expected)
  })

  it("rounds at 6 decimals like Python's round(x, 6), not like Math.round(x * 1e6) / 1e6", () => {
    // From notes/desk-social-anchors.md §6: the two JS idioms disagree on this value.
    expect(canonicalNumber(123456789.1234565)).toBe("123456789.123456")
    expect(Math.round(123456789.1234565 * 1e6) / 1e6).toBe(123456789.123457)
    expect(canonicalNumber(0.0000015)).toBe("0.000002")
    expect(canonicalNumber(-1.23456789)).toBe("-1.234568")
  })

  it("is independent of key insertion order and round-trips through JSON.parse", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.integer(), fc.string(), fc.boolean())), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse())
        const text = canonicalJson(obj)
        // Oracle for flat objects: entries sorted by code units, JSON.stringify per item, no spaces.
        const sorted = Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(obj[k])}`)
        return text === `{${sorted.join(",")}}` && text === canonicalJson(reversed) && canonicalJson(JSON.parse(text) as typeof obj) === text
      }),
      { numRuns: 200, seed: 11 }
    )
  })

  it("hashes the UTF-8 bytes for payload_hash", () => {
    expect(canonicalHash({ b: "é", a: 1 })).toBe(createHash("sha256").update(Buffer.from('{"a":1,"b":"é"}', "utf8")).digest("hex"))
  })
})

describe("HMAC helpers", () => {
  it("RFC 4231 test case 2", () => {
    expect(hmacSha256Hex("Jefe", "what do ya want for nothing?")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
  })

  it("compares in constant time without throwing on different lengths", () => {
    expect(constantTimeEqual("secret", "secret")).toBe(true)
    expect(constantTimeEqual("secret", "secreT")).toBe(false)
    expect(constantTimeEqual("secret", "secret-and-more")).toBe(false)
    expect(constantTimeEqual("", "")).toBe(true)
    expect(constantTimeEqual("", "x")).toBe(false)
    expect(constantTimeEqual(Buffer.from("abc"), Uint8Array.of(0x61, 0x62, 0x63))).toBe(true)
    expect(constantTimeEqual(null as unknown as string, "x")).toBe(false)
  })

  it("verifies a hex HMAC, case-insensitively, and refuses wrong or truncated ones", () => {
    const key = "whsec_test"
    const data = "1700000000.{\"event\":\"payout_sent\"}"
    const mac = createHmac("sha256", key).update(data).digest("hex")
    expect(verifyHmacSha256Hex(key, data, mac)).toBe(true)
    expect(verifyHmacSha256Hex(key, data, mac.toUpperCase())).toBe(true)
    expect(verifyHmacSha256Hex(key, data, mac.slice(0, 63))).toBe(false)
    expect(verifyHmacSha256Hex(key, data + " ", mac)).toBe(false)
    expect(verifyHmacSha256Hex("other", data, mac)).toBe(false)
    expect(verifyHmacSha256Hex(key, data, "")).toBe(false)
    // Not hex, or hex of another length: refused, never thrown.
    expect(verifyHmacSha256Hex(key, data, `${mac.slice(0, 62)}zz`)).toBe(false)
    expect(verifyHmacSha256Hex(key, data, `${mac}00`)).toBe(false)
    expect(verifyHmacSha256Hex(key, data, undefined as unknown as string)).toBe(false)
  })
})
