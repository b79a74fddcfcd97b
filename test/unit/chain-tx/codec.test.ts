import { Either } from "effect"
import fc from "fast-check"
import { opcodes, script as bscript } from "bitcoinjs-lib"
import { describe, expect, it } from "vitest"
import {
  AMOUNT_MAX,
  classCPayloadOf,
  decodeOmniPayload,
  encodeOmniPayload,
  OmniCodecError,
  omniScript,
  type OmniPayload
} from "../../../src/chain/omni/codec.ts"
import { unwrap } from "./fixtures.ts"

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex")
const bytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, "hex"))

describe("Omni class C codec: golden vectors", () => {
  it("simple send of property 31, 25.00000000 is the script measured on litecoind", () => {
    expect(hex(unwrap(omniScript({ type: "simpleSend", property: 31, amount: 2_500_000_000n })))).toBe("6a146f6d6e69000000000000001f000000009502f900")
    expect(hex(unwrap(encodeOmniPayload({ type: "simpleSend", property: 1, amount: 100_000_000n })))).toBe("00000000000000010000000005f5e100")
  })

  // From omnicore src/omnicore/test/create_payload_tests.cpp.
  const managed =
    "0000003601000100000000436f6d70616e69657300426974636f696e204d696e696e67" +
    "005175616e74756d204d696e6572006275696c6465722e62697477617463682e636f0000"
  const grant = "000000370000000800000000000003e84669727374204d696c6573746f6e6520526561636865642100"
  const revoke = "000000380000000800000000000003e8526564656d7074696f6e206f6620746f6b656e7320666f7220426f622c205468616e6b7320426f622100"

  it("create managed property, grant and revoke match omnicore's payloads both ways", () => {
    const m: OmniPayload = { type: "createManaged", ecosystem: 1, divisible: false, previousPropertyId: 0, category: "Companies", subcategory: "Bitcoin Mining", name: "Quantum Miner", url: "builder.bitwatch.co", data: "" }
    const g: OmniPayload = { type: "grant", property: 8, amount: 1000n, memo: "First Milestone Reached!" }
    const r: OmniPayload = { type: "revoke", property: 8, amount: 1000n, memo: "Redemption of tokens for Bob, Thanks Bob!" }
    expect(hex(unwrap(encodeOmniPayload(m)))).toBe(managed)
    expect(hex(unwrap(encodeOmniPayload(g)))).toBe(grant)
    expect(hex(unwrap(encodeOmniPayload(r)))).toBe(revoke)
    expect(unwrap(decodeOmniPayload(bytes(managed)))).toEqual(m)
    expect(unwrap(decodeOmniPayload(bytes(grant)))).toEqual(g)
    expect(unwrap(decodeOmniPayload(bytes(revoke)))).toEqual(r)
    // An empty grant is 17 bytes in omnicore: the memo's NUL is always written.
    expect(unwrap(encodeOmniPayload({ type: "grant", property: 8, amount: 1000n, memo: "" }))).toHaveLength(17)
    expect(unwrap(encodeOmniPayload({ ...m, category: "", subcategory: "", name: "n", url: "" }))).toHaveLength(17)
  })
})

const str = fc.string({ maxLength: 40 }).filter((s) => !s.includes("\0"))
const property = fc.integer({ min: 1, max: 0xffffffff })
const amount = fc.bigInt({ min: 1n, max: AMOUNT_MAX })
const payload: fc.Arbitrary<OmniPayload> = fc.oneof(
  fc.record({ type: fc.constant("simpleSend" as const), property, amount }),
  fc.record({ type: fc.constantFrom("grant" as const, "revoke" as const), property, amount, memo: str }),
  fc.record({
    type: fc.constant("createManaged" as const),
    ecosystem: fc.constantFrom(1 as const, 2 as const),
    divisible: fc.boolean(),
    previousPropertyId: fc.integer({ min: 0, max: 0xffffffff }),
    category: str,
    subcategory: str,
    name: str.filter((s) => s.length > 0),
    url: str,
    data: str
  })
)

describe("Omni class C codec: properties", () => {
  it("decode(encode(p)) = p, and the script carries the marker", () => {
    fc.assert(
      fc.property(payload, (p) => {
        const encoded = unwrap(encodeOmniPayload(p))
        expect(decodeOmniPayload(encoded)).toEqual(Either.right(p))
        expect(hex(classCPayloadOf(unwrap(omniScript(p)))!)).toBe(hex(encoded))
      }),
      { numRuns: 300 }
    )
  })

  it("decoding arbitrary bytes never throws and returns an Either", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), (b) => {
        const r = decodeOmniPayload(b)
        expect(Either.isEither(r)).toBe(true)
        if (Either.isLeft(r)) expect(r.left.message.length).toBeGreaterThan(0)
      }),
      { numRuns: 1000 }
    )
  })

  it("garbage gets a specific error", () => {
    const send = unwrap(encodeOmniPayload({ type: "simpleSend", property: 31, amount: 5n }))
    expect(decodeOmniPayload(new Uint8Array(3))).toEqual(Either.left(new OmniCodecError({ message: "payload is 3 bytes; an Omni header is 4 (version, type)" })))
    expect(decodeOmniPayload(send.subarray(0, 15))).toEqual(Either.left(new OmniCodecError({ message: "payload of type 0 is 15 bytes; it needs 16" })))
    expect(decodeOmniPayload(bytes("00000032"))).toEqual(Either.left(new OmniCodecError({ message: "unsupported Omni transaction type 50" })))
    expect(decodeOmniPayload(bytes("00010000000000010000000005f5e100"))).toEqual(Either.left(new OmniCodecError({ message: "unsupported version 1 of Omni transaction type 0" })))
    expect(decodeOmniPayload(bytes("000000360100010000000061620063"))).toEqual(Either.left(new OmniCodecError({ message: "create-property payload ends inside the subcategory string (no NUL terminator)" })))
    expect(decodeOmniPayload(bytes("000000360300010000000000000000"))).toEqual(Either.left(new OmniCodecError({ message: "ecosystem 3 must be 1 (main) or 2 (test)" })))
    expect(decodeOmniPayload(bytes("000000360100030000000000000000"))).toEqual(Either.left(new OmniCodecError({ message: "property type 3 must be 1 (indivisible) or 2 (divisible)" })))
  })

  it("refuses to encode what Omni would reject or truncate", () => {
    const err = (p: OmniPayload) => {
      const r = encodeOmniPayload(p)
      return Either.isRight(r) ? "" : r.left.message
    }
    expect(err({ type: "simpleSend", property: 31, amount: 0n })).toMatch(/amount 0 must be from 1/)
    expect(err({ type: "simpleSend", property: 31, amount: AMOUNT_MAX + 1n })).toMatch(/int64/)
    expect(err({ type: "simpleSend", property: 0, amount: 1n })).toMatch(/property id 0/)
    expect(err({ type: "grant", property: 3, amount: 1n, memo: "a\0b" })).toMatch(/NUL/)
    expect(err({ type: "grant", property: 3, amount: 1n, memo: "x".repeat(256) })).toMatch(/256 bytes; Omni keeps at most 255/)
    const m = { type: "createManaged", ecosystem: 1, divisible: true, previousPropertyId: 0, category: "", subcategory: "", name: "", url: "", data: "" } as const
    expect(err(m)).toMatch(/name must not be empty/)
  })

  it("finds the payload only in an OP_RETURN that starts with the marker", () => {
    const p2pkh = bscript.compile([opcodes.OP_DUP!, opcodes.OP_HASH160!, new Uint8Array(20), opcodes.OP_EQUALVERIFY!, opcodes.OP_CHECKSIG!])
    expect(classCPayloadOf(p2pkh)).toBeUndefined()
    expect(classCPayloadOf(bscript.compile([opcodes.OP_RETURN!, bytes("6f6d6e")]))).toBeUndefined()
    expect(classCPayloadOf(bytes("6a4c"))).toBeUndefined() // truncated push
    // Several pushes are concatenated, as the spec allows.
    expect(hex(classCPayloadOf(bscript.compile([opcodes.OP_RETURN!, bytes("6f6d"), bytes("6e690000")]))!)).toBe("0000")
  })
})
