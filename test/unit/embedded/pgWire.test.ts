import { Either, Option } from "effect"
import { describe, expect, it } from "vitest"
import {
  errorResponse,
  MessageReader,
  query,
  readyForQuery,
  readyStatus,
  type ReadResult,
  SSL_REQUEST_CODE,
  CANCEL_REQUEST_CODE,
  StartupReader,
  startupPacket,
  sync
} from "../../../src/platform/database/embedded/pgWire.ts"

const int32s = (...v: Array<number>) => {
  const b = Buffer.alloc(4 * v.length)
  v.forEach((x, i) => b.writeInt32BE(x, 4 * i))
  return b
}

const drain = <A>(next: () => ReadResult<A>): Array<A> => {
  const out: Array<A> = []
  for (;;) {
    const r = next()
    if (Either.isLeft(r) || Option.isNone(r.right)) return out
    out.push(r.right.value)
  }
}
/** The reader's answer as a word: a whole frame, not enough bytes yet, or a protocol violation. */
const kindOf = (r: ReadResult<unknown>): "Frame" | "NeedMore" | "Invalid" =>
  Either.isLeft(r) ? "Invalid" : Option.isSome(r.right) ? "Frame" : "NeedMore"

describe("MessageReader", () => {
  it("hands out several messages that arrived in one read", () => {
    const r = new MessageReader(1024)
    r.push(Buffer.concat([query("select 1"), sync(), query("select 2")]))
    const frames = drain(() => r.next())
    expect(frames.map((f) => String.fromCharCode(f.type))).toEqual(["Q", "S", "Q"])
    expect(frames[2]!.bytes).toEqual(query("select 2"))
    expect(r.buffered).toBe(0)
  })

  it("holds a message split across reads (even inside its header) until it is whole", () => {
    const big = query("x".repeat(300_000))
    const r = new MessageReader(1024 * 1024)
    const frames: Array<Buffer> = []
    // 1, 2, 3, then 64 KB pieces: the header itself arrives in three parts.
    const cuts = [1, 3, 6, ...Array.from({ length: 6 }, (_, i) => 6 + (i + 1) * 65536), big.length]
    let from = 0
    for (const to of cuts) {
      r.push(big.subarray(from, Math.min(to, big.length)))
      from = Math.min(to, big.length)
      const got = drain(() => r.next())
      if (from < big.length) expect(got).toEqual([])
      frames.push(...got.map((f) => f.bytes))
    }
    expect(frames).toHaveLength(1)
    expect(frames[0]!.equals(big)).toBe(true)
  })

  it("refuses a message above the limit and a length below 4", () => {
    const r = new MessageReader(100)
    r.push(query("x".repeat(200)))
    expect(kindOf(r.next())).toBe("Invalid")
    const bad = new MessageReader(100)
    bad.push(Buffer.from([0x51, 0, 0, 0, 3]))
    expect(kindOf(bad.next())).toBe("Invalid")
  })

  it("accepts a message exactly at the limit", () => {
    const m = query("abc")
    const r = new MessageReader(m.length)
    r.push(m)
    expect(kindOf(r.next())).toBe("Frame")
  })
})

describe("StartupReader", () => {
  it("reads an SSLRequest, then the startup packet, and leaves what follows for the message reader", () => {
    const r = new StartupReader()
    const packet = startupPacket({ user: "postgres", database: "shardline", application_name: "node-1" })
    r.push(Buffer.concat([int32s(8, SSL_REQUEST_CODE), packet.subarray(0, 5)]))
    expect(r.next()).toEqual(Either.right(Option.some({ _tag: "SslRequest" })))
    expect(kindOf(r.next())).toBe("NeedMore")
    r.push(Buffer.concat([packet.subarray(5), query("select 1")]))
    const startup = r.next()
    const frame = Either.isRight(startup) ? Option.getOrUndefined(startup.right) : undefined
    expect(frame).toBeDefined()
    if (frame?._tag === "Startup") {
      expect(frame.version).toBe(196608)
      expect(Object.fromEntries(frame.params)).toEqual({
        user: "postgres",
        database: "shardline",
        application_name: "node-1"
      })
    } else expect.fail("expected a startup packet")
    expect(r.rest()).toEqual(query("select 1"))
  })

  it("reads a CancelRequest", () => {
    const r = new StartupReader()
    r.push(int32s(16, CANCEL_REQUEST_CODE, 42, 7))
    expect(r.next()).toEqual(Either.right(Option.some({ _tag: "CancelRequest", pid: 42, secret: 7 })))
  })

  it("refuses an absurd startup length and unterminated parameters", () => {
    const r = new StartupReader()
    r.push(int32s(1_000_000, 196608))
    expect(kindOf(r.next())).toBe("Invalid")
    const u = new StartupReader()
    u.push(Buffer.concat([int32s(13, 196608), Buffer.from("user\0")]))
    expect(kindOf(u.next())).toBe("Invalid")
  })
})

describe("backend messages", () => {
  it("ReadyForQuery carries the transaction status", () => {
    const r = new MessageReader(100)
    r.push(Buffer.concat([readyForQuery("T"), readyForQuery("I")]))
    expect(drain(() => r.next()).map(readyStatus)).toEqual(["T", "I"])
  })

  it("ErrorResponse is a well-formed message with its fields", () => {
    const e = errorResponse({ severity: "FATAL", code: "53300", message: "too many" })
    expect(String.fromCharCode(e[0]!)).toBe("E")
    expect(e.readInt32BE(1)).toBe(e.length - 1)
    const fields = e.subarray(5, e.length - 1).toString("utf8").split("\0").filter((f) => f !== "")
    expect(fields).toEqual(["SFATAL", "VFATAL", "C53300", "Mtoo many"])
  })
})
