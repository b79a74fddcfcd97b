// The embedded database of a data dir: a local PostgreSQL when its binaries are on the machine,
// else PGlite in a child process behind our wire-protocol multiplexer. Either way the app gets
// a postgres:// URL and uses the same @effect/sql-pg code. See docs/embedded-postgres.md.
import { Context, Data, Effect, Layer, Schema } from "effect"
import { existsSync, mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import pg from "pg"
import {
  acquireLock,
  type Discovery,
  discoveryIsLive,
  type EngineKind,
  readDiscovery,
  releaseLock,
  removeDiscovery,
  writeDiscovery
} from "./discovery.ts"
import { findPostgresBinaries, startLocalPostgres } from "./LocalPostgres.ts"
import { MUX_USER } from "./mux.ts"
import { passwordFile, readOrMakePassword } from "./password.ts"
import { startPgliteServer } from "./PgliteServer.ts"
import { freePort, isAlive, processCommand, sleep } from "./processes.ts"
import { watchServer } from "./watchdog.ts"
import { type EngineStatus, type Running, supervise, type SupervisionEvents } from "./supervisor.ts"

export type { EngineKind } from "./discovery.ts"
export type EngineChoice = "auto" | EngineKind

export interface EmbeddedPostgres {
  readonly url: string
  readonly kind: EngineKind
  /** The postmaster, or the PGlite child process. */
  readonly serverPid: number
  /** True when this handle uses a system another process started; stop() then does nothing. */
  readonly attached: boolean
  /** The owner's view of its engine (supervised); an attached handle says "up". */
  readonly status: () => EngineStatus
  readonly stop: () => Promise<void>
}

export interface EmbeddedOptions {
  readonly dataDir: string
  readonly engine?: EngineChoice
  /** Fixed TCP port on 127.0.0.1; a free one is picked when absent. */
  readonly port?: number
  /** The owner's supervision callbacks: the engine is restarted on death whether or not given. */
  readonly supervision?: SupervisionEvents
}

/** Another process holds the data dir's engine lock (it is starting or running the engine). */
/** Another process holds the data directory's lock; connectOrStartEmbedded waits and retries on it. */
export class EmbeddedBusyError extends Data.TaggedError("EmbeddedBusyError")<{
  readonly dataDir: string
  readonly holderPid: number
  readonly message: string
}> {
  constructor(f: { readonly dataDir: string; readonly holderPid: number }) {
    super({ ...f, message: `the embedded database under ${f.dataDir} is held by process ${f.holderPid}` })
  }
}

const ATTACH_PROBE_TIMEOUT_MS = 5_000
/** How long connectOrStart waits for another process that is starting the engine. */
const ATTACH_WAIT_MS = 120_000
const ATTACH_POLL_MS = 250

const hasCluster = (dir: string) => existsSync(join(dir, "PG_VERSION"))

/**
 * auto: keep using the engine that already holds this data dir's data; otherwise prefer a local
 * PostgreSQL (faster, same engine as production) and fall back to PGlite.
 */
export const selectEngine = (dataDir: string, engine: EngineChoice = "auto"): EngineKind => {
  const binaries = findPostgresBinaries()
  if (engine === "postgres" && binaries === undefined) {
    throw new Error("engine postgres requested but postgres/initdb/pg_ctl were not found on PATH or under /usr/lib/postgresql")
  }
  if (engine !== "auto") return engine
  const hasPg = hasCluster(join(dataDir, "pg"))
  const hasPglite = hasCluster(join(dataDir, "pglite"))
  if (hasPglite && !hasPg) return "pglite"
  if (binaries !== undefined) return "postgres"
  if (hasPg) {
    throw new Error(`${join(dataDir, "pg")} holds a PostgreSQL cluster but no PostgreSQL binaries were found; install them or move the data dir`)
  }
  return "pglite"
}

const startEngine = async (kind: EngineKind, dataDir: string, port: number | undefined): Promise<Running> => {
  if (kind === "postgres") {
    const binaries = findPostgresBinaries()!
    const local = await startLocalPostgres({ dataDir, binaries, ...(port !== undefined ? { port } : {}) })
    watchServer(local.pid)
    return { url: local.url, serverPid: local.pid, stop: local.stop }
  }
  const { password } = readOrMakePassword(dataDir)
  const server = await startPgliteServer({
    pgliteDir: join(dataDir, "pglite"),
    passwordFile: passwordFile(dataDir),
    port: port ?? (await freePort()),
    logFile: join(dataDir, "pglite.log")
  })
  // PGlite has one database, "postgres"; the name in the URL is what current_database() says.
  return { url: `postgres://${MUX_USER}:${password}@127.0.0.1:${server.port}/postgres`, serverPid: server.pid, stop: server.stop }
}

/** How long a PGlite child whose owner died may take to close its dataDir before it is killed. */
const ORPHAN_EXIT_WAIT_MS = 30_000

/**
 * A PGlite child outlives its owner by the time it takes to close the database (it exits when
 * the IPC channel drops). Two PGlites must never write one dataDir, so wait for it to go.
 */
const awaitPreviousPglite = async (dataDir: string): Promise<void> => {
  const previous = readDiscovery(dataDir)
  if (previous?.kind !== "pglite") return
  const isChild = () => isAlive(previous.serverPid) && (processCommand(previous.serverPid) ?? "").includes("pgliteChild")
  const deadline = Date.now() + ORPHAN_EXIT_WAIT_MS
  while (isChild() && Date.now() < deadline) await sleep(100)
  if (!isChild()) return
  process.kill(previous.serverPid, "SIGKILL")
  for (let i = 0; i < 100 && isChild(); i++) await sleep(50)
  if (isChild()) throw new Error(`PGlite process ${previous.serverPid} still holds ${dataDir} and does not die`)
}

/** Starts the engine for dataDir in this process; throws EmbeddedBusyError if another process has it. */
export const startEmbeddedPostgres = async (options: EmbeddedOptions): Promise<EmbeddedPostgres> => {
  const dataDir = resolve(options.dataDir)
  mkdirSync(dataDir, { recursive: true })
  const lock = acquireLock(dataDir)
  if (lock._tag === "Held") throw new EmbeddedBusyError({ dataDir, holderPid: lock.pid })
  try {
    await awaitPreviousPglite(dataDir)
    const kind = selectEngine(dataDir, options.engine)
    const first = await startEngine(kind, dataDir, options.port)
    writeDiscovery(dataDir, { url: first.url, kind, serverPid: first.serverPid })
    // Restarted on the same port, so the URL (and the pools using it) stay valid.
    const port = Number(new URL(first.url).port)
    const supervised = supervise(first, () => startEngine(kind, dataDir, port), {
      ...options.supervision,
      // Nothing runs any more: unpublish and unlock now, whatever the owner's shutdown does next.
      onGiveUp: (info) => {
        removeDiscovery(dataDir)
        releaseLock(dataDir)
        options.supervision?.onGiveUp?.(info)
      },
      onRestarted: (r) => writeDiscovery(dataDir, { url: r.url, kind, serverPid: r.serverPid })
    })
    let stopping: Promise<void> | undefined
    const stop = () =>
      (stopping ??= (async () => {
        // Unpublish first, so nobody attaches to a server that is going away.
        removeDiscovery(dataDir)
        try {
          await supervised.stop()
        } finally {
          releaseLock(dataDir)
        }
      })())
    return {
      url: first.url,
      kind,
      get serverPid() {
        return supervised.current().serverPid
      },
      attached: false,
      status: supervised.status,
      stop
    }
  } catch (e) {
    releaseLock(dataDir)
    throw e
  }
}

/** Whether a server answers a trivial query at url. */
export const answers = async (url: string, timeoutMs = ATTACH_PROBE_TIMEOUT_MS): Promise<boolean> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs })
  client.on("error", () => {})
  try {
    await client.connect()
    await client.query("select 1")
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

const attachedHandle = (d: Discovery): EmbeddedPostgres => ({
  url: d.url,
  kind: d.kind,
  serverPid: d.serverPid,
  attached: true,
  status: () => "up",
  stop: () => Promise.resolve()
})

/**
 * The running embedded system of dataDir if there is one (its owner is alive and its URL
 * answers), else a new one started here. Waits while another process is starting it.
 */
export const connectOrStartEmbedded = async (options: EmbeddedOptions): Promise<EmbeddedPostgres> => {
  const dataDir = resolve(options.dataDir)
  const deadline = Date.now() + ATTACH_WAIT_MS
  for (;;) {
    const found = readDiscovery(dataDir)
    if (found !== undefined && discoveryIsLive(found) && (await answers(found.url))) return attachedHandle(found)
    try {
      return await startEmbeddedPostgres({ ...options, dataDir })
    } catch (e) {
      if (!(e instanceof EmbeddedBusyError) || Date.now() > deadline) throw e
    }
    await sleep(ATTACH_POLL_MS)
  }
}

// Effect API

export class EmbeddedPostgresError extends Schema.TaggedError<EmbeddedPostgresError>()("EmbeddedPostgresError", {
  dataDir: Schema.String,
  message: Schema.String
}) {}

/** The embedded database this process uses. */
export class EmbeddedDatabase extends Context.Tag("shardline/EmbeddedDatabase")<EmbeddedDatabase, EmbeddedPostgres>() {}

/** Acquires (attaches to or starts) the embedded database; stops it when the scope closes. */
export const embeddedPostgresScoped = (options: EmbeddedOptions) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => connectOrStartEmbedded(options),
      catch: (cause) =>
        new EmbeddedPostgresError({ dataDir: options.dataDir, message: cause instanceof Error ? cause.message : String(cause) })
    }),
    (db) => Effect.promise(() => db.stop())
  )

export const layer = (options: EmbeddedOptions): Layer.Layer<EmbeddedDatabase, EmbeddedPostgresError> =>
  Layer.scoped(EmbeddedDatabase, embeddedPostgresScoped(options))
