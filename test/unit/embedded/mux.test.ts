// The multiplexer against a scripted backend: password (SCRAM) before anything, ownership, FIFO,
// cleanup, fan-out, limits.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto"
import { Either, Option } from "effect"
import { describe, expect, it } from "vitest"
import { Multiplexer, type MuxBackend, type MuxSocket } from "../../../src/platform/database/embedded/mux.ts"
import { makeVerifier } from "../../../src/platform/database/embedded/scram.ts"
import {
  cstring as cstr,
  encodeMessage as msg,
  type Message,
  MessageReader,
  query,
  startupPacket,
  sync
} from "../../../src/platform/database/embedded/pgWire.ts"

/** Parse/Bind/Execute carry a name we use as a tag; Bind also carries a payload of any size. */
const parse = (tag: string) => msg("P", Buffer.concat([cstr(tag), cstr("insert ..."), Buffer.alloc(2)]))
const bind = (tag: string, payload: string) => msg("B", Buffer.concat([cstr(tag), cstr(tag), Buffer.from(payload)]))
const execute = (tag: string) => msg("E", Buffer.concat([cstr(tag), Buffer.alloc(4)]))
const terminate = () => msg("X", Buffer.alloc(0))
const notification = (channel: string, payload: string) =>
  msg("A", Buffer.concat([Buffer.from([0, 0, 0, 42]), cstr(channel), cstr(payload)]))
const firstCString = (m: Message) => m.bytes.toString("utf8", 5, m.bytes.indexOf(0, 5))

/** A one-session backend: logs every message it runs, tracks BEGIN/COMMIT, answers like Postgres. */
class ScriptedBackend implements MuxBackend {
  readonly log: Array<string> = []
  status: "I" | "T" | "E" = "I"
  failNext = false
  /** Resolves exec only when released, to hold a batch "running". */
  gate: Promise<void> | undefined

  readonly exec = async (bytes: Buffer, onData: (chunk: Uint8Array) => void): Promise<void> => {
    await this.gate
    if (this.failNext) {
      this.failNext = false
      throw new Error("wasm trap")
    }
    const reader = new MessageReader(1 << 30)
    reader.push(bytes)
    const out: Array<Buffer> = []
    for (;;) {
      const r = reader.next()
      if (Either.isLeft(r) || Option.isNone(r.right)) break
      const type = String.fromCharCode(r.right.value.type)
      const text = firstCString(r.right.value)
      this.log.push(`${type}:${text}`)
      if (type === "P") out.push(msg("1", Buffer.alloc(0)))
      if (type === "B") out.push(msg("2", Buffer.alloc(0)))
      if (type === "E") out.push(msg("C", cstr("INSERT 0 1")))
      if (type === "S") out.push(msg("Z", Buffer.from(this.status)))
      if (type === "Q") {
        if (/^begin/i.test(text)) this.status = "T"
        if (/^(commit|rollback)/i.test(text)) this.status = "I"
        if (/^fail/i.test(text) && this.status === "T") this.status = "E"
        if (/^notify/i.test(text)) out.push(notification("ch", text))
        out.push(msg("C", cstr("OK")), msg("Z", Buffer.from(this.status)))
      }
    }
    const all = Buffer.concat(out)
    // Deliver in two pieces cut mid-message: the mux must reassemble before routing.
    const cut = Math.floor(all.length / 2)
    onData(new Uint8Array(all.subarray(0, cut)))
    onData(new Uint8Array(all.subarray(cut)))
  }
}

class FakeSocket implements MuxSocket {
  readonly received: Array<Buffer> = []
  ended = false
  paused = false
  pauses = 0
  readonly write = (b: Buffer) => void this.received.push(Buffer.from(b))
  readonly end = () => void (this.ended = true)
  readonly pause = () => {
    this.paused = true
    this.pauses++
  }
  readonly resume = () => void (this.paused = false)
  /** Everything received after the handshake, as message type letters. */
  types(): Array<string> {
    return this.messages().map((m) => String.fromCharCode(m.type))
  }
  messages(): Array<Message> {
    const r = new MessageReader(1 << 30)
    for (const b of this.received) if (!(b.length === 1 && b[0] === 0x4e)) r.push(b)
    const out: Array<Message> = []
    for (;;) {
      const f = r.next()
      if (Either.isLeft(f) || Option.isNone(f.right)) return out
      out.push(f.right.value)
    }
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5))

const password = "correct horse"
const verifier = makeVerifier(password)

/** A SCRAM-SHA-256 client as libpq and node-postgres are: SASLInitialResponse, then SASLResponse. */
const scramClient = (pw: string) => {
  const bare = `n=*,r=${randomBytes(18).toString("base64")}`
  const first = Buffer.from(`n,,${bare}`)
  const length = Buffer.alloc(4)
  length.writeInt32BE(first.length)
  return {
    initial: msg("p", Buffer.concat([cstr("SCRAM-SHA-256"), length, first])),
    /** The client-final message for the server-first message found in what the socket received. */
    final: (socket: FakeSocket) => {
      const cont = socket.messages().find((m) => m.type === 0x52 && m.bytes.readInt32BE(5) === 11)!
      const serverFirst = cont.bytes.toString("utf8", 9)
      const attrs = new Map(serverFirst.split(",").map((a) => [a[0]!, a.slice(2)] as const))
      const salted = pbkdf2Sync(pw, Buffer.from(attrs.get("s")!, "base64"), Number(attrs.get("i")), 32, "sha256")
      const clientKey = createHmac("sha256", salted).update("Client Key").digest()
      const storedKey = createHash("sha256").update(clientKey).digest()
      const withoutProof = `c=biws,r=${attrs.get("r")}`
      const signature = createHmac("sha256", storedKey).update(`${bare},${serverFirst},${withoutProof}`).digest()
      const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!))
      return msg("p", Buffer.from(`${withoutProof},p=${proof.toString("base64")}`))
    }
  }
}

/** Startup and the SCRAM exchange with `pw`, as one client would send them. */
const authenticate = (conn: { receive: (b: Buffer) => void }, socket: FakeSocket, pw = password, user = "postgres") => {
  const client = scramClient(pw)
  conn.receive(startupPacket({ user, database: "postgres", application_name: "app" }))
  conn.receive(client.initial)
  if (!socket.ended) conn.receive(client.final(socket))
}

const setup = (limits: Partial<{ connectionsMax: number; pendingBytesMax: number; messageBytesMax: number; authenticationTimeoutMs: number }> = {}) => {
  const backend = new ScriptedBackend()
  const errors: Array<string> = []
  const mux = new Multiplexer(backend, {
    connectionsMax: limits.connectionsMax ?? 16,
    messageBytesMax: limits.messageBytesMax ?? 1 << 20,
    pendingBytesMax: limits.pendingBytesMax ?? 1 << 20,
    parameters: [["server_version", "18.6"], ["client_encoding", "UTF8"]],
    verifier,
    ...(limits.authenticationTimeoutMs !== undefined ? { authenticationTimeoutMs: limits.authenticationTimeoutMs } : {}),
    onError: (m) => void errors.push(m)
  })
  const connect = () => {
    const socket = new FakeSocket()
    const conn = mux.attach(socket)
    authenticate(conn, socket)
    expect(socket.types().at(-1)).toBe("Z")
    socket.received.length = 0
    return { socket, conn }
  }
  return { backend, mux, connect, errors }
}

describe("Multiplexer handshake", () => {
  it("answers SSLRequest with N, asks for SCRAM-SHA-256, then SASLFinal, AuthenticationOk, ParameterStatus, BackendKeyData, ReadyForQuery", () => {
    const { mux } = setup()
    const socket = new FakeSocket()
    const conn = mux.attach(socket)
    const ssl = Buffer.alloc(8)
    ssl.writeInt32BE(8, 0)
    ssl.writeInt32BE(80877103, 4)
    conn.receive(ssl)
    expect(socket.received[0]).toEqual(Buffer.from("N"))
    const client = scramClient(password)
    conn.receive(startupPacket({ user: "postgres", application_name: "app" }))
    expect(socket.types()).toEqual(["R"])
    const sasl = socket.messages()[0]!
    expect(sasl.bytes.readInt32BE(5)).toBe(10) // AuthenticationSASL
    expect(sasl.bytes.toString("utf8", 9)).toBe("SCRAM-SHA-256\0\0")
    conn.receive(client.initial)
    expect(socket.types()).toEqual(["R", "R"])
    expect(mux.stats().connections).toBe(0) // not before the proof
    conn.receive(client.final(socket))
    expect(socket.types()).toEqual(["R", "R", "R", "R", "S", "S", "S", "K", "Z"])
    const [, , final, ok] = socket.messages()
    expect(final!.bytes.readInt32BE(5)).toBe(12) // AuthenticationSASLFinal
    expect(final!.bytes.toString("utf8", 9)).toMatch(/^v=[A-Za-z0-9+/]+=*$/)
    expect(ok!.bytes.readInt32BE(5)).toBe(0) // AuthenticationOk
    const z = socket.messages().at(-1)!
    expect(String.fromCharCode(z.bytes[5]!)).toBe("I")
    expect(mux.stats().connections).toBe(1)
  })

  it("refuses a wrong password, another user, and any message before the proof; the backend never sees them", async () => {
    const { mux, backend } = setup()
    const refusal = (socket: FakeSocket) => {
      expect(socket.ended).toBe(true)
      expect(socket.types().at(-1)).toBe("E")
      return socket.messages().at(-1)!.bytes.toString("utf8")
    }
    const wrong = new FakeSocket()
    authenticate(mux.attach(wrong), wrong, "wrong horse")
    expect(refusal(wrong)).toContain("C28P01")
    expect(refusal(wrong)).toContain(`password authentication failed for user "postgres"`)
    expect(wrong.types()).not.toContain("Z")

    const other = new FakeSocket()
    authenticate(mux.attach(other), other, password, "mallory")
    expect(refusal(other)).toContain(`password authentication failed for user "mallory"`)

    // No password at all: a query right after startup (a client that expects trust).
    const none = new FakeSocket()
    const c = mux.attach(none)
    c.receive(Buffer.concat([startupPacket({ user: "postgres" }), query("select 1")]))
    expect(refusal(none)).toContain("C08P01")

    // A cleartext PasswordMessage is not a SASLInitialResponse.
    const clear = new FakeSocket()
    const d = mux.attach(clear)
    d.receive(startupPacket({ user: "postgres" }))
    d.receive(msg("p", cstr(password)))
    expect(refusal(clear)).toContain("C08P01")

    await settle()
    expect(backend.log).toEqual([])
    expect(mux.stats().connections).toBe(0)
  })

  it("allows big messages only after the proof (Postgres's 65535 bytes before)", () => {
    const { mux, backend } = setup({ messageBytesMax: 1 << 20 })
    const socket = new FakeSocket()
    const conn = mux.attach(socket)
    conn.receive(startupPacket({ user: "postgres" }))
    conn.receive(msg("p", Buffer.alloc(70_000)))
    expect(socket.ended).toBe(true)
    expect(socket.messages().at(-1)!.bytes.toString("utf8")).toContain("exceeds the limit of 65535")
    expect(backend.log).toEqual([])
  })

  it("closes a connection that has not authenticated within authenticationTimeoutMs", async () => {
    const { mux } = setup({ authenticationTimeoutMs: 20 })
    const socket = new FakeSocket()
    mux.attach(socket).receive(startupPacket({ user: "postgres" }))
    await new Promise((r) => setTimeout(r, 60))
    expect(socket.ended).toBe(true)
    expect(socket.messages().at(-1)!.bytes.toString("utf8")).toContain("canceling authentication due to timeout")
    const done = new FakeSocket()
    const conn = mux.attach(done)
    authenticate(conn, done)
    await new Promise((r) => setTimeout(r, 60))
    expect(done.ended).toBe(false)
  })

  it("refuses connections past connectionsMax with SQLSTATE 53300", () => {
    const { mux, connect } = setup({ connectionsMax: 2 })
    connect()
    connect()
    const socket = new FakeSocket()
    mux.attach(socket).receive(startupPacket({ user: "postgres" }))
    expect(socket.types()).toEqual(["E"])
    expect(socket.messages()[0]!.bytes.toString("utf8")).toContain("C53300")
    expect(socket.ended).toBe(true)
    expect(mux.stats().connections).toBe(2)
  })

  it("closes a cancel request without an answer", () => {
    const { mux } = setup()
    const socket = new FakeSocket()
    const cancel = Buffer.alloc(16)
    cancel.writeInt32BE(16, 0)
    cancel.writeInt32BE(80877102, 4)
    mux.attach(socket).receive(cancel)
    expect(socket.received).toEqual([])
    expect(socket.ended).toBe(true)
  })
})

describe("Multiplexer session ownership", () => {
  it("keeps an owner's Parse/Bind/Execute/Sync together while its Bind arrives in pieces", async () => {
    const { backend, connect } = setup()
    const a = connect()
    const b = connect()
    const bigBind = bind("a", "x".repeat(300_000))
    a.conn.receive(Buffer.concat([parse("a"), bigBind.subarray(0, 1000)]))
    await settle()
    // b sends a whole group while a's Bind is still on the wire.
    b.conn.receive(Buffer.concat([parse("b"), bind("b", "small"), execute("b"), sync()]))
    await settle()
    a.conn.receive(bigBind.subarray(1000, 70_000))
    await settle()
    a.conn.receive(Buffer.concat([bigBind.subarray(70_000), execute("a"), sync()]))
    await settle()
    expect(backend.log).toEqual(["P:a", "B:a", "E:a", "S:", "P:b", "B:b", "E:b", "S:"])
    expect(a.socket.types()).toEqual(["1", "2", "C", "Z"])
    expect(b.socket.types()).toEqual(["1", "2", "C", "Z"])
  })

  it("never runs another connection's message inside a group that arrived behind a completed Query", async () => {
    const { backend, connect } = setup()
    const a = connect()
    const b = connect()
    a.conn.receive(Buffer.concat([query("select a"), parse("a2")]))
    b.conn.receive(query("select b"))
    await settle()
    a.conn.receive(Buffer.concat([bind("a2", "p"), execute("a2"), sync()]))
    await settle()
    // a's Query completes idle, so b may go next; a's extended group then runs unbroken.
    expect(backend.log).toEqual(["Q:select a", "Q:select b", "P:a2", "B:a2", "E:a2", "S:"])
  })

  it("gives the session to one transaction at a time and queues others FIFO", async () => {
    const { backend, connect, mux } = setup()
    const [t, w1, w2, w3] = [connect(), connect(), connect(), connect()]
    t.conn.receive(query("BEGIN"))
    await settle()
    w2.conn.receive(query("select 2"))
    w1.conn.receive(query("select 1"))
    w3.conn.receive(query("select 3"))
    t.conn.receive(query("update 1"))
    await settle()
    expect(backend.log).toEqual(["Q:BEGIN", "Q:update 1"])
    expect(mux.stats().queued).toBe(3)
    t.conn.receive(query("COMMIT"))
    await settle()
    expect(backend.log.slice(2)).toEqual(["Q:COMMIT", "Q:select 2", "Q:select 1", "Q:select 3"])
    expect(mux.stats()).toEqual({ connections: 4, queued: 0, ownerId: undefined })
  })

  it("keeps ownership through an error inside a transaction until ROLLBACK", async () => {
    const { backend, connect } = setup()
    const a = connect()
    const b = connect()
    a.conn.receive(query("BEGIN"))
    a.conn.receive(query("FAIL here"))
    b.conn.receive(query("select b"))
    await settle()
    expect(backend.log).toEqual(["Q:BEGIN", "Q:FAIL here"])
    a.conn.receive(query("ROLLBACK"))
    await settle()
    expect(backend.log).toEqual(["Q:BEGIN", "Q:FAIL here", "Q:ROLLBACK", "Q:select b"])
  })

  it("ends the group and rolls back when an owner leaves mid-transaction", async () => {
    const { backend, connect } = setup()
    const a = connect()
    const b = connect()
    a.conn.receive(query("BEGIN"))
    await settle()
    a.conn.receive(parse("half")) // a half-sent extended group too
    b.conn.receive(query("select b"))
    await settle()
    a.conn.close()
    await settle()
    expect(backend.log).toEqual(["Q:BEGIN", "P:half", "f:connection closed", "S:", "Q:ROLLBACK", "Q:select b"])
    expect(backend.status).toBe("I")
    expect(b.socket.types()).toEqual(["C", "Z"])
  })

  it("treats Terminate as a close and drops what the connection had queued", async () => {
    const { backend, connect, mux } = setup()
    const a = connect()
    const b = connect()
    a.conn.receive(query("BEGIN"))
    await settle()
    b.conn.receive(Buffer.concat([query("select b"), terminate()]))
    await settle()
    expect(b.socket.ended).toBe(true)
    expect(mux.stats().queued).toBe(0)
    a.conn.receive(query("COMMIT"))
    await settle()
    expect(backend.log).toEqual(["Q:BEGIN", "Q:COMMIT"])
  })

  it("answers FATAL to the owner when the backend throws, resets the session, and serves the next", async () => {
    const { backend, connect, errors } = setup()
    const a = connect()
    const b = connect()
    backend.failNext = true
    a.conn.receive(query("select a"))
    b.conn.receive(query("select b"))
    await settle()
    expect(a.socket.types()).toEqual(["E"])
    expect(a.socket.ended).toBe(true)
    expect(backend.log).toEqual(["f:connection closed", "S:", "Q:select b"])
    expect(b.socket.types()).toEqual(["C", "Z"])
    expect(errors.length).toBeGreaterThan(0)
  })
})

describe("Multiplexer notifications and limits", () => {
  it("forwards a NotificationResponse to every connection, the notifier in-band once", async () => {
    const { connect } = setup()
    const listener = connect()
    const notifier = connect()
    const idle = connect()
    notifier.conn.receive(query("NOTIFY ch"))
    await settle()
    expect(notifier.socket.types()).toEqual(["A", "C", "Z"])
    expect(listener.socket.types()).toEqual(["A"])
    expect(idle.socket.types()).toEqual(["A"])
  })

  it("stops reading a connection whose queued messages exceed pendingBytesMax, resumes after", async () => {
    const { backend, connect } = setup({ pendingBytesMax: 1000 })
    const a = connect()
    const b = connect()
    a.conn.receive(query("BEGIN"))
    await settle()
    b.conn.receive(query(`select '${"y".repeat(2000)}'`))
    expect(b.socket.paused).toBe(true)
    a.conn.receive(query("COMMIT"))
    await settle()
    expect(b.socket.paused).toBe(false)
    expect(backend.log).toHaveLength(3)
  })

  it("closes a connection sending a message above messageBytesMax", () => {
    const { connect } = setup({ messageBytesMax: 200 })
    const a = connect()
    a.conn.receive(query("x".repeat(300)))
    expect(a.socket.types()).toEqual(["E"])
    expect(a.socket.ended).toBe(true)
  })

  it("shutdown waits for the running batch, then closes everyone", async () => {
    const { backend, connect, mux } = setup()
    const a = connect()
    let release = () => {}
    backend.gate = new Promise((r) => (release = r))
    a.conn.receive(query("select slow"))
    await settle()
    let done = false
    const closing = mux.shutdown().then(() => (done = true))
    await settle()
    expect(done).toBe(false)
    release()
    await closing
    expect(a.socket.ended).toBe(true)
    expect(mux.stats().connections).toBe(0)
  })
})
