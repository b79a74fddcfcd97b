// Postgres wire protocol v3: framing and the few backend messages the multiplexer writes itself.
// Pure: bytes in, frames out. TCP delivers a message in pieces, or several in one read; the
// reader keeps the pieces and hands out whole messages only, so nothing downstream ever sees
// half a Bind (the bug in stock pglite-socket, see notes/embedded-db-brief.md).
// Modules, not the "effect" index: the PGlite child process loads this file and nothing else
// of effect, and the whole index would add about a second to its start.
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

export const PROTOCOL_V3 = 196608
export const SSL_REQUEST_CODE = 80877103
export const GSSENC_REQUEST_CODE = 80877104
export const CANCEL_REQUEST_CODE = 80877102

/** Postgres's own limit for a startup packet (MAX_STARTUP_PACKET_LENGTH). */
export const STARTUP_BYTES_MAX = 10_000
/** Postgres's own limit for a message before authentication is done (PG_MAX_AUTH_TOKEN_LENGTH). */
export const AUTH_MESSAGE_BYTES_MAX = 65_535

/** Message type bytes the multiplexer acts on (frontend, then backend). */
export const MessageType = {
  Query: 0x51, // 'Q'
  Sync: 0x53, // 'S'
  Terminate: 0x58, // 'X'
  ReadyForQuery: 0x5a, // 'Z'
  NotificationResponse: 0x41, // 'A'
  /** PasswordMessage, SASLInitialResponse and SASLResponse all use 'p'. */
  Password: 0x70 // 'p'
} as const

export type StartupFrame =
  | { readonly _tag: "Startup"; readonly version: number; readonly params: ReadonlyMap<string, string> }
  | { readonly _tag: "SslRequest" }
  | { readonly _tag: "GssEncRequest" }
  | { readonly _tag: "CancelRequest"; readonly pid: number; readonly secret: number }

/** One whole typed message, header included, ready to pass on unchanged. */
export interface Message {
  readonly type: number
  readonly bytes: Buffer
}

/** Bytes that break the protocol; `message` goes to the peer in a FATAL ErrorResponse. */
export class WireInvalid extends Data.TaggedError("WireInvalid")<{ readonly message: string }> {}

/** A whole frame, none yet (Option.none: wait for more bytes), or why the bytes are not the protocol. */
export type ReadResult<A> = Either.Either<Option.Option<A>, WireInvalid>

const needMore: ReadResult<never> = Either.right(Option.none())
const frame = <A>(a: A): ReadResult<A> => Either.right(Option.some(a))
const invalid = (message: string): ReadResult<never> => Either.left(new WireInvalid({ message }))

/**
 * Accumulates chunks without copying until a whole frame is present, then copies it once.
 * Concatenating on every read would be quadratic for a large Bind arriving in 64 KB pieces.
 */
class ChunkBuffer {
  private chunks: Array<Buffer> = []
  private total = 0

  get length(): number {
    return this.total
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return
    this.chunks.push(chunk)
    this.total += chunk.length
  }

  /** The first n bytes (n <= length), copied only when they span chunks. */
  peek(n: number): Buffer {
    const first = this.chunks[0]
    if (first !== undefined && first.length >= n) return first.subarray(0, n)
    return Buffer.concat(this.chunks, this.total).subarray(0, n)
  }

  /** Removes and returns the first n bytes (n <= length). */
  take(n: number): Buffer {
    const first = this.chunks[0]
    let out: Buffer
    if (first !== undefined && first.length >= n) {
      out = first.subarray(0, n)
    } else {
      const all = Buffer.concat(this.chunks, this.total)
      this.chunks = [all]
      out = all.subarray(0, n)
    }
    this.drop(n)
    return out
  }

  private drop(n: number): void {
    let left = n
    while (left > 0) {
      const head = this.chunks[0]!
      if (head.length <= left) {
        this.chunks.shift()
        left -= head.length
      } else {
        this.chunks[0] = head.subarray(left)
        left = 0
      }
    }
    this.total -= n
  }
}

const parseStartupParams = (body: Buffer): Map<string, string> | undefined => {
  const params = new Map<string, string>()
  let i = 0
  for (;;) {
    const keyEnd = body.indexOf(0, i)
    if (keyEnd < 0) return undefined
    if (keyEnd === i) return params // the terminating empty name
    const valueEnd = body.indexOf(0, keyEnd + 1)
    if (valueEnd < 0) return undefined
    params.set(body.toString("utf8", i, keyEnd), body.toString("utf8", keyEnd + 1, valueEnd))
    i = valueEnd + 1
  }
}

/** Frames the untyped packets a connection may open with: startup, SSL/GSS requests, cancel. */
export class StartupReader {
  private readonly buffer = new ChunkBuffer()

  get buffered(): number {
    return this.buffer.length
  }

  push(chunk: Buffer): void {
    this.buffer.push(chunk)
  }

  /** What follows the startup packet is typed messages; the caller moves it to a MessageReader. */
  rest(): Buffer {
    return this.buffer.take(this.buffer.length)
  }

  next(): ReadResult<StartupFrame> {
    if (this.buffer.length < 8) return needMore
    const header = this.buffer.peek(8)
    const length = header.readInt32BE(0)
    if (length < 8 || length > STARTUP_BYTES_MAX) return invalid(`invalid startup packet length ${length}`)
    if (this.buffer.length < length) return needMore
    const packet = this.buffer.take(length)
    const code = packet.readInt32BE(4)
    if (code === SSL_REQUEST_CODE) return frame({ _tag: "SslRequest" })
    if (code === GSSENC_REQUEST_CODE) return frame({ _tag: "GssEncRequest" })
    if (code === CANCEL_REQUEST_CODE) {
      if (length !== 16) return invalid("invalid cancel request length")
      return frame({ _tag: "CancelRequest", pid: packet.readInt32BE(8), secret: packet.readInt32BE(12) })
    }
    const params = parseStartupParams(packet.subarray(8))
    if (params === undefined) return invalid("malformed startup parameters")
    return frame({ _tag: "Startup", version: code, params })
  }
}

/** Frames typed messages (1 type byte, int32 length that counts itself), either direction. */
export class MessageReader {
  private readonly buffer = new ChunkBuffer()

  /** messageBytesMax bounds the one partial message a peer can make us hold; it may be raised later
   * (the multiplexer allows big messages only once a connection has authenticated). */
  constructor(public messageBytesMax: number) {}

  get buffered(): number {
    return this.buffer.length
  }

  push(chunk: Buffer): void {
    this.buffer.push(chunk)
  }

  next(): ReadResult<Message> {
    if (this.buffer.length < 5) return needMore
    const header = this.buffer.peek(5)
    const length = header.readInt32BE(1)
    if (length < 4) return invalid(`invalid message length ${length}`)
    if (length + 1 > this.messageBytesMax) {
      return invalid(`message of ${length + 1} bytes exceeds the limit of ${this.messageBytesMax}`)
    }
    if (this.buffer.length < length + 1) return needMore
    return frame({ type: header[0]!, bytes: this.buffer.take(length + 1) })
  }
}

// Backend messages the multiplexer writes itself.

/** A typed message: type letter, int32 length (counting itself), body. */
export const encodeMessage = (type: string, body: Buffer): Buffer => {
  const out = Buffer.allocUnsafe(5 + body.length)
  out[0] = type.charCodeAt(0)
  out.writeInt32BE(4 + body.length, 1)
  body.copy(out, 5)
  return out
}

export const cstring = (s: string): Buffer => Buffer.concat([Buffer.from(s, "utf8"), Buffer.alloc(1)])

const int32s = (...values: ReadonlyArray<number>): Buffer => {
  const out = Buffer.alloc(4 * values.length)
  values.forEach((v, i) => out.writeInt32BE(v, 4 * i))
  return out
}

export const authenticationOk = (): Buffer => encodeMessage("R", int32s(0))

/** AuthenticationSASL: the mechanisms the server offers. */
export const authenticationSasl = (mechanisms: ReadonlyArray<string>): Buffer =>
  encodeMessage("R", Buffer.concat([int32s(10), ...mechanisms.map(cstring), Buffer.alloc(1)]))

/** AuthenticationSASLContinue: the server-first message. */
export const authenticationSaslContinue = (data: string): Buffer =>
  encodeMessage("R", Buffer.concat([int32s(11), Buffer.from(data, "utf8")]))

/** AuthenticationSASLFinal: the server-final message. */
export const authenticationSaslFinal = (data: string): Buffer =>
  encodeMessage("R", Buffer.concat([int32s(12), Buffer.from(data, "utf8")]))

/** SASLInitialResponse ('p'): the mechanism and the client-first message. */
export const readSaslInitialResponse = (m: Message): Either.Either<{ readonly mechanism: string; readonly data: string }, WireInvalid> => {
  const body = m.bytes.subarray(5)
  const end = body.indexOf(0)
  if (m.type !== MessageType.Password || end < 0 || body.length < end + 5) {
    return Either.left(new WireInvalid({ message: "expected a SASLInitialResponse" }))
  }
  const length = body.readInt32BE(end + 1)
  const data = body.subarray(end + 5)
  if (length !== data.length) return Either.left(new WireInvalid({ message: "SASLInitialResponse length mismatch" }))
  return Either.right({ mechanism: body.toString("utf8", 0, end), data: data.toString("utf8") })
}

/** SASLResponse ('p'): the client-final message. */
export const readSaslResponse = (m: Message): Either.Either<string, WireInvalid> =>
  m.type === MessageType.Password
    ? Either.right(m.bytes.toString("utf8", 5))
    : Either.left(new WireInvalid({ message: "expected a SASLResponse" }))

export const parameterStatus = (name: string, value: string): Buffer =>
  encodeMessage("S", Buffer.concat([cstring(name), cstring(value)]))

export const backendKeyData = (pid: number, secret: number): Buffer => encodeMessage("K", int32s(pid, secret))

export type TransactionStatus = "I" | "T" | "E"

export const readyForQuery = (status: TransactionStatus): Buffer => encodeMessage("Z", Buffer.from(status, "ascii"))

/** The single byte answering SSLRequest/GSSENCRequest: not supported, carry on in plain text. */
export const sslRefused = (): Buffer => Buffer.from("N", "ascii")

export interface ErrorFields {
  readonly severity: "ERROR" | "FATAL"
  readonly code: string
  readonly message: string
}

export const errorResponse = (fields: ErrorFields): Buffer =>
  encodeMessage(
    "E",
    Buffer.concat([
      cstring(`S${fields.severity}`),
      cstring(`V${fields.severity}`),
      cstring(`C${fields.code}`),
      cstring(`M${fields.message}`),
      Buffer.alloc(1)
    ])
  )

// Frontend messages the multiplexer injects when a connection leaves mid-way.

export const sync = (): Buffer => encodeMessage("S", Buffer.alloc(0))

export const query = (sql: string): Buffer => encodeMessage("Q", cstring(sql))

export const copyFail = (reason: string): Buffer => encodeMessage("f", cstring(reason))

/** The status byte of a ReadyForQuery message, or undefined for any other message. */
export const readyStatus = (m: Message): TransactionStatus | undefined => {
  if (m.type !== MessageType.ReadyForQuery || m.bytes.length < 6) return undefined
  const status = String.fromCharCode(m.bytes[5]!)
  return status === "I" || status === "T" || status === "E" ? status : undefined
}

/** The startup packet a client sends; used by tests and the liveness probe. */
export const startupPacket = (params: Readonly<Record<string, string>>): Buffer => {
  const body = Buffer.concat([
    int32s(PROTOCOL_V3),
    ...Object.entries(params).flatMap(([k, v]) => [cstring(k), cstring(v)]),
    Buffer.alloc(1)
  ])
  return Buffer.concat([int32s(body.length + 4), body])
}
