// Many client connections over one Postgres session (PGlite has exactly one).
//
// Rule: one connection owns the session from its first message until a boundary message (Sync
// or simple Query) has completed and the backend reported ReadyForQuery 'I' (no transaction
// open). Everything a non-owner sends waits in its own buffer, so an owner's Parse/Bind/Execute
// can never be split by another connection's Parse, and a transaction is never shared. Waiting
// connections take the session in FIFO order. NotificationResponse messages reach every
// connection, because LISTEN is session-wide and the listener is rarely the one who notified.
//
// Every connection proves the password first (SCRAM-SHA-256, scram.ts), as the local-postgres
// engine's pg_hba asks; nothing reaches the session before that.
//
// Backend-agnostic: the backend runs whole frontend messages and streams its output; the socket
// is a small interface. Both are faked in test/unit/embedded/mux.test.ts.
import { randomInt } from "node:crypto"
// Modules, not the "effect" index: see pgWire.ts.
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import {
  AUTH_MESSAGE_BYTES_MAX,
  authenticationOk,
  authenticationSasl,
  authenticationSaslContinue,
  authenticationSaslFinal,
  backendKeyData,
  copyFail,
  errorResponse,
  type Message,
  MessageReader,
  MessageType,
  parameterStatus,
  PROTOCOL_V3,
  query,
  readyForQuery,
  readSaslInitialResponse,
  readSaslResponse,
  readyStatus,
  sslRefused,
  StartupReader,
  sync,
  type TransactionStatus
} from "./pgWire.ts"
import { SCRAM_SHA_256, type ScramExchange, serverFinal, serverFirst, type ScramVerifier } from "./scram.ts"

export interface MuxBackend {
  /** Runs complete frontend messages on the session, streaming raw backend output to onData. */
  readonly exec: (messages: Buffer, onData: (chunk: Uint8Array) => void) => Promise<void>
}

export interface MuxSocket {
  readonly write: (bytes: Buffer) => void
  /** Closes after flushing what was written. */
  readonly end: () => void
  readonly pause: () => void
  readonly resume: () => void
}

export interface MuxConnection {
  readonly receive: (chunk: Buffer) => void
  /** The peer went away (socket closed or errored). */
  readonly close: () => void
}

export interface MuxOptions {
  /** Ready connections at once; more are refused with SQLSTATE 53300. Also bounds the wait queue. */
  readonly connectionsMax: number
  /** Largest single frontend message; a bigger one closes the connection (Postgres allows 1 GB). */
  readonly messageBytesMax: number
  /** Complete messages buffered per waiting connection before we stop reading its socket. */
  readonly pendingBytesMax: number
  /** ParameterStatus values sent in every handshake (server_version, encodings, DateStyle...). */
  readonly parameters: ReadonlyArray<readonly [string, string]>
  /** The password every connection must prove (SCRAM-SHA-256), as its verifier. */
  readonly verifier: ScramVerifier
  /** A connection not authenticated this long after it opened is closed (Postgres: authentication_timeout). */
  readonly authenticationTimeoutMs?: number
  readonly onError: (message: string, cause?: unknown) => void
}

/** The only role there is: PGlite's session runs as it, whatever a client asks for. */
export const MUX_USER = "postgres"

export const defaultMuxLimits = {
  connectionsMax: 64,
  authenticationTimeoutMs: 60_000,
  messageBytesMax: 256 * 1024 * 1024,
  pendingBytesMax: 16 * 1024 * 1024
} as const

/** Backend output can be as large as Postgres allows a message to be. */
const BACKEND_MESSAGE_BYTES_MAX = 1024 * 1024 * 1024 + 5

const isBoundary = (type: number) => type === MessageType.Sync || type === MessageType.Query

// Sent when an owner leaves mid-way: CopyFail ends a COPY IN (ignored outside one, per the
// protocol), Sync ends an extended-protocol group and any error-skipping.
const ABANDON = Buffer.concat([copyFail("connection closed"), sync()])

class Connection implements MuxConnection {
  phase: "startup" | "auth" | "ready" | "closed" = "startup"
  user = ""
  applicationName = ""
  /** Set once the server-first message was sent. */
  scram: ScramExchange | undefined = undefined
  authTimer: ReturnType<typeof setTimeout> | undefined = undefined
  readonly startup = new StartupReader()
  readonly messages: MessageReader
  readonly pending: Array<Message> = []
  pendingBytes = 0
  paused = false
  queued = false
  /** Owns the session beyond the current batch: mid extended-protocol group, or in a transaction. */
  holdsSession = false

  constructor(readonly id: number, readonly socket: MuxSocket, private readonly mux: Multiplexer) {
    // Until the password is proven, only messages of the size authentication needs.
    this.messages = new MessageReader(Math.min(AUTH_MESSAGE_BYTES_MAX, mux.options.messageBytesMax))
  }

  readonly receive = (chunk: Buffer): void => this.mux.receive(this, chunk)
  readonly close = (): void => this.mux.closeConnection(this)
}

export interface MuxStats {
  readonly connections: number
  readonly queued: number
  readonly ownerId: number | undefined
}

export class Multiplexer {
  private readonly connections = new Set<Connection>()
  private readonly queue: Array<Connection> = []
  private owner: Connection | undefined = undefined
  private running = false
  private idleWaiters: Array<() => void> = []
  private nextId = 1
  private closing = false

  constructor(private readonly backend: MuxBackend, readonly options: MuxOptions) {}

  attach(socket: MuxSocket): MuxConnection {
    const conn = new Connection(this.nextId++, socket, this)
    if (this.closing) {
      this.refuse(conn, "57P01", "the embedded database is shutting down")
      return conn
    }
    this.connections.add(conn)
    const timeoutMs = this.options.authenticationTimeoutMs
    if (timeoutMs !== undefined) {
      conn.authTimer = setTimeout(() => {
        if (conn.phase === "startup" || conn.phase === "auth") this.refuse(conn, "08P01", "canceling authentication due to timeout")
      }, timeoutMs)
      conn.authTimer.unref?.()
    }
    return conn
  }

  stats(): MuxStats {
    return { connections: this.readyCount(), queued: this.queue.length, ownerId: this.owner?.id }
  }

  /** Closes every connection and resolves once the session is idle (the running batch finished). */
  async shutdown(): Promise<void> {
    this.closing = true
    for (const conn of [...this.connections]) this.closeConnection(conn)
    if (!this.running) return
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve))
  }

  receive(conn: Connection, chunk: Buffer): void {
    if (conn.phase === "closed") return
    if (conn.phase === "startup") {
      conn.startup.push(chunk)
      // readStartup may move the connection on (ready) or close it; TS cannot see that.
      if (!this.readStartup(conn)) return
    } else {
      conn.messages.push(chunk)
    }
    this.readMessages(conn)
  }

  closeConnection(conn: Connection): void {
    if (conn.phase === "closed") return
    conn.phase = "closed"
    clearTimeout(conn.authTimer)
    this.connections.delete(conn)
    conn.pending.length = 0
    conn.pendingBytes = 0
    if (conn.queued) {
      this.queue.splice(this.queue.indexOf(conn), 1)
      conn.queued = false
    }
    conn.socket.end()
    // An owner that leaves mid-transaction must not leave the session stuck: run() cleans up.
    if (conn === this.owner) this.kick()
  }

  private readyCount(): number {
    let n = 0
    for (const c of this.connections) if (c.phase === "ready") n++
    return n
  }

  private refuse(conn: Connection, code: string, message: string): void {
    conn.socket.write(errorResponse({ severity: "FATAL", code, message }))
    this.closeConnection(conn)
  }

  /** Handles the untyped opening packets; true once the connection is ready for messages. */
  private readStartup(conn: Connection): boolean {
    for (;;) {
      const r = conn.startup.next()
      if (Either.isLeft(r)) return this.refused(conn, "08P01", r.left.message)
      if (Option.isNone(r.right)) return false
      const frame = r.right.value
      switch (frame._tag) {
        case "SslRequest":
        case "GssEncRequest":
          conn.socket.write(sslRefused())
          continue
        case "CancelRequest":
          // PGlite cannot interrupt a running statement; Postgres itself answers a cancel with silence.
          this.closeConnection(conn)
          return false
        case "Startup":
          if (frame.version !== PROTOCOL_V3) {
            return this.refused(conn, "0A000", `unsupported frontend protocol ${frame.version >> 16}.${frame.version & 0xffff}`)
          }
          if (this.readyCount() >= this.options.connectionsMax) {
            return this.refused(conn, "53300", "sorry, too many clients already")
          }
          conn.user = frame.params.get("user") ?? ""
          conn.applicationName = frame.params.get("application_name") ?? ""
          conn.phase = "auth"
          conn.socket.write(authenticationSasl([SCRAM_SHA_256]))
          conn.messages.push(conn.startup.rest())
          return true
      }
    }
  }

  private refused(conn: Connection, code: string, message: string): false {
    this.refuse(conn, code, message)
    return false
  }

  /** One SASL message of a connection in "auth"; on the last one, the handshake. False: refused. */
  private authenticate(conn: Connection, message: Message): boolean {
    const verifier = this.options.verifier
    if (conn.scram === undefined) {
      const initial = readSaslInitialResponse(message)
      if (Either.isLeft(initial)) return this.refused(conn, "08P01", initial.left.message)
      if (initial.right.mechanism !== SCRAM_SHA_256) {
        return this.refused(conn, "08P01", "client selected an invalid SASL authentication mechanism")
      }
      const first = serverFirst(verifier, initial.right.data)
      if (Either.isLeft(first)) return this.refused(conn, first.left.code, first.left.message)
      conn.scram = first.right.exchange
      conn.socket.write(authenticationSaslContinue(first.right.message))
      return true
    }
    const response = readSaslResponse(message)
    if (Either.isLeft(response)) return this.refused(conn, "08P01", response.left.message)
    const final = serverFinal(verifier, conn.scram, response.right)
    if (Either.isLeft(final) && final.left.code !== "28P01") return this.refused(conn, final.left.code, final.left.message)
    if (Either.isLeft(final) || conn.user !== MUX_USER) {
      return this.refused(conn, "28P01", `password authentication failed for user "${conn.user}"`)
    }
    if (this.readyCount() >= this.options.connectionsMax) return this.refused(conn, "53300", "sorry, too many clients already")
    clearTimeout(conn.authTimer)
    conn.phase = "ready"
    conn.messages.messageBytesMax = this.options.messageBytesMax
    this.handshake(conn, final.right)
    return true
  }

  private handshake(conn: Connection, serverFinalMessage: string): void {
    const out: Array<Buffer> = [authenticationSaslFinal(serverFinalMessage), authenticationOk()]
    for (const [name, value] of this.options.parameters) out.push(parameterStatus(name, value))
    out.push(parameterStatus("application_name", conn.applicationName))
    out.push(backendKeyData(conn.id, randomInt(0x7fffffff)))
    out.push(readyForQuery("I"))
    conn.socket.write(Buffer.concat(out))
  }

  private readMessages(conn: Connection): void {
    for (;;) {
      const r = conn.messages.next()
      if (Either.isLeft(r)) return this.refuse(conn, "08P01", r.left.message)
      if (Option.isNone(r.right)) break
      const message = r.right.value
      // Clients send Terminate after their last result has arrived, so nothing of theirs is pending.
      if (message.type === MessageType.Terminate) return this.closeConnection(conn)
      if (conn.phase === "auth") {
        if (!this.authenticate(conn, message)) return
        continue
      }
      conn.pending.push(message)
      conn.pendingBytes += message.bytes.length
    }
    if (conn.pending.length > 0 && conn !== this.owner && !conn.queued) {
      conn.queued = true
      this.queue.push(conn)
    }
    if (conn.pendingBytes > this.options.pendingBytesMax && !conn.paused) {
      conn.paused = true
      conn.socket.pause()
    }
    this.kick()
  }

  /** Messages up to and including the first boundary (or all, if none has arrived yet). */
  private takeBatch(conn: Connection): { readonly bytes: Buffer; readonly boundary: boolean } | undefined {
    if (conn.pending.length === 0) return undefined
    const cut = conn.pending.findIndex((m) => isBoundary(m.type))
    const taken = conn.pending.splice(0, cut < 0 ? conn.pending.length : cut + 1)
    const bytes = Buffer.concat(taken.map((m) => m.bytes))
    conn.pendingBytes -= bytes.length
    if (conn.paused && conn.pendingBytes <= this.options.pendingBytesMax / 2) {
      conn.paused = false
      conn.socket.resume()
    }
    return { bytes, boundary: cut >= 0 }
  }

  private hasWork(): boolean {
    const o = this.owner
    if (o !== undefined) return o.phase === "closed" || o.pending.length > 0
    return this.queue.length > 0
  }

  private kick(): void {
    if (this.running) return
    this.running = true
    this.run()
      .catch((cause) => this.options.onError("multiplexer loop failed", cause))
      .finally(() => {
        this.running = false
        if (this.hasWork()) return this.kick()
        const waiters = this.idleWaiters
        this.idleWaiters = []
        for (const w of waiters) w()
      })
  }

  private async run(): Promise<void> {
    for (;;) {
      let o = this.owner
      if (o === undefined) {
        o = this.queue.shift()
        if (o === undefined) return
        o.queued = false
        this.owner = o
      }
      if (o.phase === "closed") {
        if (o.holdsSession) await this.abandon(o)
        this.owner = undefined
        continue
      }
      const batch = this.takeBatch(o)
      if (batch === undefined) {
        if (o.holdsSession) return // wait for this owner's next message or its close
        this.owner = undefined
        continue
      }
      const status = await this.execFor(o, batch.bytes)
      o.holdsSession = !(batch.boundary && status === "I")
      if (!o.holdsSession) {
        this.owner = undefined
        if (o.pending.length > 0 && o.phase === "ready") {
          o.queued = true
          this.queue.push(o)
        }
      }
    }
  }

  /** Runs a batch for conn; returns the last ReadyForQuery status seen, if any. */
  private async execFor(conn: Connection, bytes: Buffer): Promise<TransactionStatus | undefined> {
    const output = new MessageReader(BACKEND_MESSAGE_BYTES_MAX)
    let status: TransactionStatus | undefined = undefined
    const onData = (chunk: Uint8Array): void => {
      // PGlite hands out a view into its wasm heap that the next write overwrites: copy it.
      output.push(Buffer.from(chunk))
      const whole: Array<Buffer> = []
      for (;;) {
        const r = output.next()
        if (Either.isLeft(r)) {
          this.options.onError(`backend output unreadable: ${r.left.message}`)
          break
        }
        if (Option.isNone(r.right)) break
        const message = r.right.value
        whole.push(message.bytes)
        if (message.type === MessageType.NotificationResponse) this.broadcast(conn, message.bytes)
        status = readyStatus(message) ?? status
      }
      if (whole.length > 0 && conn.phase === "ready") conn.socket.write(Buffer.concat(whole))
    }
    try {
      await this.backend.exec(bytes, onData)
    } catch (cause) {
      this.options.onError(`backend failed on connection ${conn.id}`, cause)
      if (conn.phase === "ready") {
        conn.socket.write(errorResponse({ severity: "FATAL", code: "XX000", message: `embedded database failure: ${String(cause)}` }))
      }
      conn.holdsSession = true // so run() resets the session before anyone else gets it
      this.closeConnection(conn)
      return undefined
    }
    if (output.buffered > 0) this.options.onError(`backend output ended mid-message (${output.buffered} bytes)`)
    return status
  }

  /** The owner left while holding the session: end its group, roll back its transaction. */
  private async abandon(conn: Connection): Promise<void> {
    try {
      const status = await this.execFor(conn, ABANDON)
      if (status !== "I") await this.execFor(conn, query("ROLLBACK"))
    } catch (cause) {
      this.options.onError(`could not reset the session after connection ${conn.id} left`, cause)
    }
    conn.holdsSession = false
  }

  private broadcast(from: Connection, notification: Buffer): void {
    for (const c of this.connections) if (c !== from && c.phase === "ready") c.socket.write(notification)
  }
}
