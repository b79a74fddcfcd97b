// Entry of the PGlite child process: one PGlite on a persistent dataDir behind the multiplexer,
// listening on 127.0.0.1, every connection asked for the password (SCRAM-SHA-256). It runs in
// its own process because PGlite executes queries synchronously on the JS thread; here that
// blocks only this process, not the app's event loop.
// The parent (PgliteServer.ts) controls the lifetime over IPC: "stop", or the channel closing
// when the parent dies, shuts the database down cleanly.
import { PGlite } from "@electric-sql/pglite"
import { createServer, type Socket } from "node:net"
import { defaultMuxLimits, Multiplexer, type MuxSocket } from "./mux.ts"
import { readPassword } from "./password.ts"
import { makeVerifier } from "./scram.ts"

export interface ChildConfig {
  readonly dataDir: string
  readonly host: string
  readonly port: number
  /** The 0600 file with the password every connection must prove (the path only: argv is public). */
  readonly passwordFile: string
}

export type ChildReport =
  | { readonly type: "ready"; readonly port: number; readonly openMs: number }
  | { readonly type: "failed"; readonly message: string }

// Reported at every handshake. Clients (pg, @effect/sql-pg) read server_version and the encodings.
const REPORTED_SETTINGS = [
  "server_version",
  "server_encoding",
  "client_encoding",
  "DateStyle",
  "IntervalStyle",
  "TimeZone",
  "integer_datetimes",
  "standard_conforming_strings",
  "is_superuser",
  "session_authorization"
]

const report = (r: ChildReport): void => {
  process.send?.(r)
}

const socketAdapter = (socket: Socket): MuxSocket => ({
  write: (bytes) => {
    if (!socket.destroyed) socket.write(bytes)
  },
  end: () => socket.end(),
  pause: () => socket.pause(),
  resume: () => socket.resume()
})

/** Set once serving; until then, losing the parent just ends this process. */
let shutdown: (() => Promise<void>) | undefined
const onParentGone = (): void => {
  if (shutdown) void shutdown()
  else process.exit(1)
}
process.on("disconnect", onParentGone)
process.on("SIGTERM", onParentGone)
process.on("message", (m: unknown) => {
  if (typeof m === "object" && m !== null && (m as { type?: unknown }).type === "stop") onParentGone()
})
// Ctrl-C in the app's terminal is the app's to handle; it stops us when its own finalizers are done.
process.on("SIGINT", () => {})

const main = async (config: ChildConfig): Promise<void> => {
  const t0 = performance.now()
  // Only the verifier stays in memory, as Postgres keeps it; a fresh salt at every start.
  const verifier = makeVerifier(readPassword(config.passwordFile))
  const db = new PGlite(config.dataDir)
  await db.waitReady
  // Read before the first raw-protocol call: PGlite's query() must not be mixed with raw streams.
  const settings = await db.query<{ name: string; setting: string }>(
    "select name, setting from pg_settings where name = any($1)",
    [REPORTED_SETTINGS]
  )
  const parameters = settings.rows.map((r) => [r.name, r.setting] as const)
  const openMs = Math.round(performance.now() - t0)

  const mux = new Multiplexer(
    { exec: (messages, onData) => db.execProtocolRawStream(messages, { onRawData: onData }) },
    {
      ...defaultMuxLimits,
      parameters,
      verifier,
      onError: (message, cause) => console.error(`[pglite-mux] ${message}`, cause ?? "")
    }
  )
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.setNoDelay(true)
    const conn = mux.attach(socketAdapter(socket))
    socket.on("data", conn.receive)
    socket.on("error", () => conn.close())
    socket.on("close", () => {
      sockets.delete(socket)
      conn.close()
    })
  })

  let stopping: Promise<void> | undefined
  shutdown = () =>
    (stopping ??= (async () => {
      let code = 0
      try {
        server.close()
        await mux.shutdown()
        for (const s of sockets) s.destroy()
        await db.close() // checkpoints: the next open needs no recovery
      } catch (cause) {
        console.error("[pglite-child] unclean shutdown", cause)
        code = 1
      }
      process.exit(code)
    })())

  // The mux bounds ready connections; this bounds sockets still in (or stuck before) the handshake.
  server.maxConnections = 2 * defaultMuxLimits.connectionsMax
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(config.port, config.host, () => resolve())
  })
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : config.port
  report({ type: "ready", port, openMs })
}

const config = JSON.parse(process.argv[2] ?? "{}") as ChildConfig
main(config).catch((cause: unknown) => {
  console.error("[pglite-child] failed to start", cause)
  report({ type: "failed", message: String(cause) })
  setTimeout(() => process.exit(1), 100)
})
