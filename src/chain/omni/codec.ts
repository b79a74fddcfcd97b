// Omni Layer class C payloads: the bytes after the "omni" marker in an OP_RETURN output.
// Layouts follow OmniSpecification.adoc and omnicore's createpayload.cpp (golden vectors from
// its create_payload_tests.cpp are in the tests). Big-endian integers, NUL-terminated strings.
// Pure: decoding untrusted bytes returns an Either and never throws.
import { opcodes, script as bscript } from "bitcoinjs-lib"
import { Data, Either } from "effect"

/** "omni": the class C marker in front of every payload. */
export const OMNI_MARKER = Uint8Array.of(0x6f, 0x6d, 0x6e, 0x69)

export const TYPE_SIMPLE_SEND = 0
export const TYPE_CREATE_MANAGED = 54
export const TYPE_GRANT = 55
export const TYPE_REVOKE = 56
/** Omni Core accepts version 0 of these four types; later versions change the layout. */
export const PAYLOAD_VERSION = 0

export const ECOSYSTEM_MAIN = 1
export const ECOSYSTEM_TEST = 2
export type Ecosystem = typeof ECOSYSTEM_MAIN | typeof ECOSYSTEM_TEST
/** Omni property types for new properties: 1 indivisible, 2 divisible (8 decimals). */
export const PROPERTY_TYPE_INDIVISIBLE = 1
export const PROPERTY_TYPE_DIVISIBLE = 2

/** Omni Core keeps each string field in a 256-byte buffer: 255 bytes plus the NUL. */
export const STRING_BYTES_MAX = 255
/** Omni amounts are int64: no more than this may ever exist of one property. */
export const AMOUNT_MAX = (1n << 63n) - 1n
export const PROPERTY_ID_MAX = 0xffffffff

export type OmniPayload =
  | { readonly type: "simpleSend"; readonly property: number; readonly amount: bigint }
  | {
      readonly type: "createManaged"
      readonly ecosystem: Ecosystem
      readonly divisible: boolean
      /** 0 for a new property (Omni Core refuses anything else). */
      readonly previousPropertyId: number
      readonly category: string
      readonly subcategory: string
      readonly name: string
      readonly url: string
      readonly data: string
    }
  | { readonly type: "grant"; readonly property: number; readonly amount: bigint; readonly memo: string }
  | { readonly type: "revoke"; readonly property: number; readonly amount: bigint; readonly memo: string }

/** A payload that cannot be encoded or decoded; `message` is for a person. */
export class OmniCodecError extends Data.TaggedError("OmniCodecError")<{ readonly message: string }> {}

type Coded<A> = Either.Either<A, OmniCodecError>
const fail = <A>(message: string): Coded<A> => Either.left(new OmniCodecError({ message }))
const utf8 = new TextEncoder()
// Omni strings are bytes; invalid UTF-8 is shown with U+FFFD rather than refused, as Omni Core
// would accept the transaction.
const utf8Decoder = new TextDecoder("utf-8", { fatal: false })

const checkProperty = (property: number): string | undefined =>
  Number.isInteger(property) && property >= 1 && property <= PROPERTY_ID_MAX
    ? undefined
    : `property id ${property} must be an integer from 1 to ${PROPERTY_ID_MAX}`

const checkAmount = (amount: bigint): string | undefined =>
  amount >= 1n && amount <= AMOUNT_MAX ? undefined : `amount ${amount} must be from 1 to ${AMOUNT_MAX} (int64)`

const stringBytes = (field: string, s: string): Coded<Uint8Array> => {
  const bytes = utf8.encode(s)
  if (bytes.includes(0)) return fail(`${field} contains a NUL character, which ends an Omni string`)
  if (bytes.length > STRING_BYTES_MAX) return fail(`${field} is ${bytes.length} bytes; Omni keeps at most ${STRING_BYTES_MAX}`)
  return Either.right(Uint8Array.of(...bytes, 0))
}

const header = (type: number): number[] => [PAYLOAD_VERSION >> 8, PAYLOAD_VERSION & 0xff, type >> 8, type & 0xff]

const u32 = (n: number): Uint8Array => {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setUint32(0, n)
  return b
}
const u64 = (n: bigint): Uint8Array => {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, n)
  return b
}
const concat = (parts: ReadonlyArray<ArrayLike<number>>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const encodeTokens = (type: number, property: number, amount: bigint, memo: string | undefined): Coded<Uint8Array> => {
  const bad = checkProperty(property) ?? checkAmount(amount)
  if (bad !== undefined) return fail(bad)
  const tail: Array<ArrayLike<number>> = []
  if (memo !== undefined) {
    const m = stringBytes("memo", memo)
    if (Either.isLeft(m)) return Either.left(m.left)
    tail.push(m.right)
  }
  return Either.right(concat([header(type), u32(property), u64(amount), ...tail]))
}

/** The payload bytes (without the marker) for a transaction, or why it cannot be encoded. */
export const encodeOmniPayload = (p: OmniPayload): Coded<Uint8Array> => {
  switch (p.type) {
    case "simpleSend":
      return encodeTokens(TYPE_SIMPLE_SEND, p.property, p.amount, undefined)
    case "grant":
      return encodeTokens(TYPE_GRANT, p.property, p.amount, p.memo)
    case "revoke":
      return encodeTokens(TYPE_REVOKE, p.property, p.amount, p.memo)
    case "createManaged": {
      if (p.ecosystem !== ECOSYSTEM_MAIN && p.ecosystem !== ECOSYSTEM_TEST) return fail(`ecosystem ${String(p.ecosystem)} must be 1 (main) or 2 (test)`)
      if (!Number.isInteger(p.previousPropertyId) || p.previousPropertyId < 0 || p.previousPropertyId > PROPERTY_ID_MAX) {
        return fail(`previous property id ${p.previousPropertyId} must be an integer from 0 to ${PROPERTY_ID_MAX}`)
      }
      if (p.name === "") return fail("name must not be empty (Omni Core refuses a property without a name)")
      const strings: Uint8Array[] = []
      for (const [field, s] of [["category", p.category], ["subcategory", p.subcategory], ["name", p.name], ["url", p.url], ["data", p.data]] as const) {
        const b = stringBytes(field, s)
        if (Either.isLeft(b)) return Either.left(b.left)
        strings.push(b.right)
      }
      const propertyType = p.divisible ? PROPERTY_TYPE_DIVISIBLE : PROPERTY_TYPE_INDIVISIBLE
      return Either.right(concat([header(TYPE_CREATE_MANAGED), [p.ecosystem, propertyType >> 8, propertyType & 0xff], u32(p.previousPropertyId), ...strings]))
    }
  }
}

/** A reader over untrusted bytes: every read checks the length first. */
class Reader {
  at = 0
  private readonly view: DataView
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }
  has(n: number): boolean {
    return this.at + n <= this.bytes.length
  }
  u8(): number {
    return this.bytes[this.at++]!
  }
  u16(): number {
    const v = this.view.getUint16(this.at)
    this.at += 2
    return v
  }
  u32(): number {
    const v = this.view.getUint32(this.at)
    this.at += 4
    return v
  }
  u64(): bigint {
    const v = this.view.getBigUint64(this.at)
    this.at += 8
    return v
  }
  /** A NUL-terminated string; undefined when the packet ends before the NUL (Omni's "overrun"). */
  cString(): string | undefined {
    const end = this.bytes.indexOf(0, this.at)
    if (end < 0) return undefined
    const s = utf8Decoder.decode(this.bytes.subarray(this.at, end))
    this.at = end + 1
    return s
  }
  /** The rest up to a NUL or the end: Omni Core ignores grant/revoke memos, so it never fails. */
  memo(): string {
    const end = this.bytes.indexOf(0, this.at)
    const s = utf8Decoder.decode(this.bytes.subarray(this.at, end < 0 ? this.bytes.length : end))
    this.at = this.bytes.length
    return s
  }
}

const TOKENS_BYTES = 16
const CREATE_FIXED_BYTES = 11

/**
 * Decodes a class C payload (after the marker). Like Omni Core, bytes after a complete
 * simple send are ignored; unknown types and versions are errors, as are truncated packets.
 */
export const decodeOmniPayload = (bytes: Uint8Array): Coded<OmniPayload> => {
  const r = new Reader(bytes)
  if (!r.has(4)) return fail(`payload is ${bytes.length} bytes; an Omni header is 4 (version, type)`)
  const version = r.u16()
  const type = r.u16()
  const known = type === TYPE_SIMPLE_SEND || type === TYPE_CREATE_MANAGED || type === TYPE_GRANT || type === TYPE_REVOKE
  if (!known) return fail(`unsupported Omni transaction type ${type}`)
  if (version !== PAYLOAD_VERSION) return fail(`unsupported version ${version} of Omni transaction type ${type}`)
  if (type === TYPE_CREATE_MANAGED) {
    if (!r.has(CREATE_FIXED_BYTES - 4)) return fail(`create-property payload is ${bytes.length} bytes; the fixed part alone is ${CREATE_FIXED_BYTES}`)
    const ecosystem = r.u8()
    const propertyType = r.u16()
    const previousPropertyId = r.u32()
    if (ecosystem !== ECOSYSTEM_MAIN && ecosystem !== ECOSYSTEM_TEST) return fail(`ecosystem ${ecosystem} must be 1 (main) or 2 (test)`)
    if (propertyType !== PROPERTY_TYPE_INDIVISIBLE && propertyType !== PROPERTY_TYPE_DIVISIBLE) {
      return fail(`property type ${propertyType} must be 1 (indivisible) or 2 (divisible)`)
    }
    const fields: string[] = []
    for (const field of ["category", "subcategory", "name", "url", "data"]) {
      const s = r.cString()
      if (s === undefined) return fail(`create-property payload ends inside the ${field} string (no NUL terminator)`)
      fields.push(s)
    }
    const [category, subcategory, name, url, data] = fields as [string, string, string, string, string]
    return Either.right({ type: "createManaged", ecosystem, divisible: propertyType === PROPERTY_TYPE_DIVISIBLE, previousPropertyId, category, subcategory, name, url, data })
  }
  if (!r.has(TOKENS_BYTES - 4)) return fail(`payload of type ${type} is ${bytes.length} bytes; it needs ${TOKENS_BYTES}`)
  const property = r.u32()
  const amount = r.u64()
  if (type === TYPE_SIMPLE_SEND) return Either.right({ type: "simpleSend", property, amount })
  const memo = r.memo()
  return Either.right({ type: type === TYPE_GRANT ? "grant" : "revoke", property, amount, memo })
}

const startsWithMarker = (b: Uint8Array): boolean => b.length >= OMNI_MARKER.length && OMNI_MARKER.every((x, i) => b[i] === x)

/** The OP_RETURN output script for a payload: OP_RETURN push("omni" ‖ payload). */
export const omniScript = (p: OmniPayload): Coded<Uint8Array> => {
  const payload = encodeOmniPayload(p)
  return Either.map(payload, (bytes) => bscript.compile([opcodes.OP_RETURN!, concat([OMNI_MARKER, bytes])]))
}

/**
 * The class C payload carried by an output script: an OP_RETURN whose pushes, concatenated,
 * start with the marker (the spec allows several pushes). Undefined for any other script.
 */
export const classCPayloadOf = (script: Uint8Array): Uint8Array | undefined => {
  if (script[0] !== opcodes.OP_RETURN) return undefined
  let chunks: ReturnType<typeof bscript.decompile>
  try {
    chunks = bscript.decompile(script)
  } catch {
    return undefined
  }
  if (chunks === null) return undefined
  const pushes = chunks.slice(1)
  if (!pushes.every((c): c is Uint8Array => c instanceof Uint8Array)) return undefined
  const data = concat(pushes)
  return startsWithMarker(data) ? data.subarray(OMNI_MARKER.length) : undefined
}
