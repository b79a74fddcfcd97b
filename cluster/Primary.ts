// More than one process per node (SHARDLINE_PROCESSES > 1; docs/operations.md, "Processes per
// node"). This process becomes a node:cluster primary: it owns the listening sockets (a worker's
// listen() is bound by the primary, which hands accepted connections round-robin; Node 20 has no
// reusePort), starts the embedded Postgres when no SHARDLINE_DATABASE_URL is set, and runs
// SHARDLINE_PROCESSES workers. Each worker is a whole node of its own to the cluster: a
// socket-topology runner on SHARDLINE_RUNNER_PORT + its index, with the one database and master
// key, so shards spread over the processes as over nodes. It serves no request itself.
//   - Start: all together when the data dir already holds the key-epoch ratchet; on a fresh data
//     dir process 1 first (it makes the ratchet alone: KeyEpochStore.ts), then the others. A process that exits before it is up is started again, with a growing
//     pause, START_RETRIES_MAX times; then the node stops (exit 1) with the reason.
//   - A process that dies once up (kill -9, a crash) is started again at once: meanwhile its
//     shards move to the other runners, this node's others included, as when a node dies.
//   - SIGTERM/SIGINT: every process gets the stop message and drains as a node does
//     (src/platform/NodeMain.ts); once all have exited the embedded database stops.
//   - If the primary itself dies (kill -9), each worker's IPC channel closes and node:cluster
//     ends the worker at once: the node dies as a whole, like a one-process node.
import cluster, { type Worker } from "node:cluster"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { ConfigError, Data, Deferred, Effect, Option, Redacted } from "effect"
import type { NodeConfigShape } from "../src/config.ts"
import { keyEpochsFile } from "../src/exchange/Exchange.ts"
import { checkChainSettings } from "../src/platform/ChainsLive.ts"
import { configErrorLine } from "../src/platform/Config.ts"
import { embeddedDatabase } from "../src/platform/database/EmbeddedDatabase.ts"
import { selectEngine } from "../src/platform/database/embedded/EmbeddedPostgres.ts"
import { readyMessage, setStopSettings, stopMessage } from "../src/platform/NodeMain.ts"
import { isMetricsMessage, gatherTimeoutMs, mergeExpositions, metricsMessages, processIndexVar, type MetricsMessage } from "../src/platform/ops/processMetrics.ts"
import { loadMasterKey } from "../src/platform/SecretBox.ts"
import { settingName } from "../src/platform/settings.ts"


/** A process that exits before it is up is started again this many times before the node stops. */
const START_RETRIES_MAX = 3
const START_RETRY_BASE_MS = 1_000
/** The pause before a process that died once up is started again (its shards are already moving). */
const RESTART_PAUSE_MS = 250
/** The primary outlasts its workers' own stop bound by this much before it gives up on them. */
const STOP_MARGIN_MS = 5_000

export class WorkersFailed extends Data.TaggedError("WorkersFailed")<{ readonly message: string }> {}

const refuse = (message: string) => Effect.fail(ConfigError.InvalidData([settingName("PROCESSES")], message))

/** What worker `index` runs with, over the node's own environment. */
export const workerVars = (config: NodeConfigShape, databaseUrl: string, masterKeyHex: string, index: number): Record<string, string> => ({
  [settingName("TOPOLOGY")]: "socket",
  [settingName("DATABASE_URL")]: databaseUrl,
  [settingName("MASTER_KEY")]: masterKeyHex,
  [settingName("RUNNER_PORT")]: String(config.runnerPort + index),
  ...Option.match(config.runnerListenPort, { onNone: () => ({}), onSome: (p) => ({ [settingName("RUNNER_LISTEN_PORT")]: String(p + index) }) }),
  [processIndexVar]: String(index)
})

/**
 * What makes N processes impossible, refused before anything starts: runner ports past 65535, an
 * embedded database only PGlite can give, in-process devnet chains (a different chain in each
 * process) unless SHARDLINE_DEVNET_PER_NODE accepts them, as for separate nodes.
 */
export const checkProcesses = (config: NodeConfigShape): Effect.Effect<void, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const n = config.processes
    const last = Math.max(config.runnerPort, Option.getOrElse(config.runnerListenPort, () => 0)) + n - 1
    if (last > 65_535) {
      return yield* refuse(`${n} processes take runner ports ${config.runnerPort} to ${config.runnerPort + n - 1} (SHARDLINE_RUNNER_PORT + index): past 65535`)
    }
    if (Option.isNone(config.databaseUrl)) {
      const engine = yield* Effect.try({ try: () => selectEngine(config.dataDir, config.embeddedEngine), catch: (e) => (e as Error).message }).pipe(
        Effect.catchAll((why) => refuse(`${n} processes share one embedded PostgreSQL, which cannot start here: ${why}`))
      )
      if (engine === "pglite") {
        return yield* refuse(
          `${n} processes need one PostgreSQL server they all share: set SHARDLINE_DATABASE_URL, or put PostgreSQL (postgres, initdb, pg_ctl) ` +
            "on this machine for the embedded default. PGlite cannot: it has one session for every connection, and each process's runner holds its shards as session advisory locks of its own"
        )
      }
    }
    yield* checkChainSettings({ ...config, topology: "socket" }).pipe(
      Effect.catchAll((e) => refuse(`each of the ${n} processes is a runner of its own, so ${configErrorLine(e).replace(/^config: /, "")}`))
    )
  })

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} shardline: ${line}\n`)

/** False when the worker is gone or its channel closed meanwhile. */
const send = (worker: Worker, m: MetricsMessage): boolean => {
  if (worker.isDead() || !worker.isConnected()) return false
  try {
    worker.send(m) // false only says the channel is backed up: the message is still queued
    return true
  } catch {
    return false
  }
}

const isReady = (m: unknown) => typeof m === "object" && m !== null && (m as { type?: unknown }).type === readyMessage.type

interface Slot {
  readonly index: number
  worker: Worker | undefined
  up: boolean
  startFailures: number
}

/** Runs the workers; `failed` is completed when one cannot be started. */
const startWorkers = (config: NodeConfigShape, vars: (index: number) => Record<string, string>, failed: Deferred.Deferred<never, WorkersFailed>) => {
  const n = config.processes
  const slots: Array<Slot> = Array.from({ length: n }, (_, index) => ({ index, worker: undefined, up: false, startFailures: 0 }))
  let stopping = false
  // A fresh data dir: process 1 makes the key-epoch ratchet before the others read it.
  const fresh = !existsSync(join(config.dataDir, keyEpochsFile))
  let othersStarted = !fresh
  let nextGather = 1
  const gathers = new Map<number, { texts: Array<string>; expected: number; finish: () => void }>()
  /** A scrape reached `asker`: every process that is up renders its registry; the merge goes back. */
  const gatherMetrics = (asker: Worker, askId: number) => {
    const id = nextGather++
    // The asker too, even before it said it is up: it already listens.
    const up = [...new Set([asker, ...slots.flatMap((s) => (s.up && s.worker !== undefined ? [s.worker] : []))])].filter((w) => !w.isDead())
    const texts: Array<string> = []
    const finish = () => {
      if (!gathers.delete(id)) return
      clearTimeout(timer)
      send(asker, { type: metricsMessages.merged, id: askId, text: mergeExpositions(texts) })
    }
    const timer = setTimeout(finish, gatherTimeoutMs)
    gathers.set(id, { texts, expected: up.length, finish })
    for (const w of up) if (!send(w, { type: metricsMessages.render, id })) gathers.get(id)!.expected--
  }
  const onMetricsMessage = (worker: Worker, m: MetricsMessage) => {
    if (m.type === metricsMessages.request) return gatherMetrics(worker, m.id)
    if (m.type !== metricsMessages.rendered || m.text === undefined) return
    const g = gathers.get(m.id)
    if (g === undefined) return
    g.texts.push(m.text)
    if (g.texts.length >= g.expected) g.finish()
  }
  const name = (s: Slot) => `process ${s.index + 1} of ${n} (runner ${config.runnerHost}:${config.runnerPort + s.index})`

  const fork = (slot: Slot) => {
    const worker = cluster.fork({ ...process.env, ...vars(slot.index) })
    slot.worker = worker
    slot.up = false
    worker.on("message", (m: unknown) => {
      if (isMetricsMessage(m)) return onMetricsMessage(worker, m)
      if (!isReady(m) || slot.worker !== worker) return
      slot.up = true
      slot.startFailures = 0
      log(`${name(slot)} is up, pid ${worker.process.pid}`)
      if (!othersStarted) {
        othersStarted = true
        for (const s of slots) if (s !== slot) fork(s)
      }
    })
    worker.on("exit", (code, signal) => {
      if (slot.worker === worker) slot.worker = undefined
      if (stopping) return
      const how = signal ?? `code ${code}`
      if (slot.up) {
        log(`${name(slot)}, pid ${worker.process.pid}, exited (${how}); the other runners take its shards; starting it again`)
        setTimeout(() => { if (!stopping) fork(slot) }, RESTART_PAUSE_MS)
        return
      }
      slot.startFailures++
      if (slot.startFailures > START_RETRIES_MAX) {
        Deferred.unsafeDone(failed, Effect.fail(new WorkersFailed({ message: `${name(slot)} died at start ${slot.startFailures} times (last: ${how}); stopping the node` })))
        return
      }
      const pauseMs = START_RETRY_BASE_MS * 2 ** (slot.startFailures - 1)
      log(`${name(slot)} died at start (${how}); starting it again in ${pauseMs} ms (retry ${slot.startFailures} of ${START_RETRIES_MAX})`)
      setTimeout(() => { if (!stopping) fork(slot) }, pauseMs)
    })
  }

  if (fresh) fork(slots[0]!)
  else for (const s of slots) fork(s)

  /** Every process drains and exits as a node does; past the workers' own bound they are killed. */
  const stop = async () => {
    stopping = true
    const running = slots.flatMap((s) => (s.worker !== undefined && !s.worker.isDead() ? [s.worker] : []))
    const killer = setTimeout(() => {
      for (const w of running) if (!w.isDead()) w.process.kill("SIGKILL")
    }, config.stopTimeoutMs + STOP_MARGIN_MS / 2)
    await Promise.all(running.map((w) => new Promise<void>((resolve) => {
      if (w.isDead()) return resolve()
      w.once("exit", () => resolve())
      try {
        w.send(stopMessage)
      } catch {
        w.process.kill("SIGTERM")
      }
    })))
    clearTimeout(killer)
  }
  return { stop }
}

/** The node as a primary over `config.processes` workers; ends only by a signal or a failure. */
export const runPrimary = (config: NodeConfigShape): Effect.Effect<never, ConfigError.ConfigError | WorkersFailed> =>
  Effect.scoped(Effect.gen(function*() {
    yield* checkProcesses(config)
    yield* setStopSettings({ stopDrainMs: config.stopDrainMs, stopTimeoutMs: config.stopTimeoutMs + STOP_MARGIN_MS })
    const databaseUrl = Option.isSome(config.databaseUrl)
      ? Redacted.value(config.databaseUrl.value)
      : (yield* embeddedDatabase(config.dataDir, "postgres")).url
    // Every process seals and opens secrets with the same key (the data dir's, on the embedded default).
    const masterKeyHex = loadMasterKey(config).toString("hex")
    const failed = yield* Deferred.make<never, WorkersFailed>()
    yield* Effect.acquireRelease(
      Effect.sync(() => startWorkers(config, (i) => workerVars(config, databaseUrl, masterKeyHex, i), failed)),
      (workers) => Effect.promise(() => workers.stop())
    )
    log(`${config.processes} processes behind http://${config.httpHost}:${config.httpPort} (and the desk's and social listeners), ` +
      `runners ${config.runnerHost}:${config.runnerPort}-${config.runnerPort + config.processes - 1}`)
    return yield* Deferred.await(failed)
  }))
