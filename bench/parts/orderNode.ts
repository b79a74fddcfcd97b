// The node of `npm run bench -- orders`, as its own process: the same layer `npm start` launches
// (cluster/Node.ts, configured only by SHARDLINE_* variables), plus an IPC channel through which
// the bench process does what a test does with a node in its own process (test/support/node.ts
// `run`): issue Omni properties from the ledger devnet's faucet and fund delegated addresses, on
// this node's own in-process devnet. It also collects the Market entity's per-batch figures
// (marketInstrumentation) for the bench to read after its measured window.
//
// Protocol: the parent sends { id, op, ...args }; the child answers { id, ok: true, result } or
// { id, ok: false, error }. Ops: issue {name, whole}, fund {sends: [{to, property, sats}]},
// batches {reset?: boolean}, loop {reset?: boolean} (event loop utilization and delay since the
// last reset), fanout {reset?: boolean} (the SSE fan-out's rounds, writes and CPU since the last
// reset: marketdata/sse.ts fanoutFigures), profileStart, profileStop {file} (a .cpuprofile of this process,
// from the inspector, so it covers only the window the bench chooses), heapStart, heapStop {file} (a
// sampling heap profile of the same window, counting what was allocated: harness/heapProfile.ts).
import { NodeRuntime } from "@effect/platform-node"
import cluster, { type Worker } from "node:cluster"
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { makeLoopMeter } from "./loopMeter.ts"
import { Effect, Layer } from "effect"
import { nodeLayer } from "../../cluster/Node.ts"
import { runPrimary } from "../../cluster/Primary.ts"
import { readyMessage, stopMessage } from "../../src/platform/NodeMain.ts"
import { faucetOmniSend, issueFaucetProperty } from "../../harness/faucetOmni.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { type BatchFigures, marketInstrumentation } from "../../src/exchange/market/MarketEntity.ts"
import { fanoutFigures } from "../../src/exchange/marketdata/sse.ts"
import { nodeConfig } from "../../src/config.ts"
import { exitOnConfigError } from "../../src/platform/Config.ts"

export interface FundSend {
  readonly to: string
  readonly property: number
  /** Base units (satoshis of the property), as a decimal string (IPC carries JSON). */
  readonly sats: string
}

/** Per-batch figures the Market entity reported since the last reset. */
const batches: Array<BatchFigures & { readonly symbol: string }> = []
marketInstrumentation.onBatch = (symbol, figures) => {
  if (batches.length < 2_000_000) batches.push({ symbol, ...figures })
}

const loopFigures = makeLoopMeter()

interface Reply {
  readonly id: number
  readonly ok: boolean
  readonly result?: unknown
  readonly error?: string
}

/**
 * With SHARDLINE_PROCESSES > 1 (BENCH_ORDERS_PROCESSES) this process is the node's primary and
 * each worker runs its own devnet (SHARDLINE_DEVNET_PER_NODE): issue and fund go to every worker
 * in turn, so each devnet holds the same properties and balances whichever process owns a market;
 * batches are every worker's; loop is the busiest worker's; a profile is the first worker's.
 */
const relayToWorkers = () => {
  let next = 0
  const pending = new Map<number, (r: Reply) => void>()
  cluster.on("message", (_w: Worker, m: Reply) => {
    if (typeof m?.id !== "number" || typeof m.ok !== "boolean") return
    pending.get(m.id)?.(m)
    pending.delete(m.id)
  })
  const ask = (w: Worker, msg: Record<string, unknown>) =>
    new Promise<Reply>((resolve) => {
      const id = ++next
      pending.set(id, resolve)
      w.send({ ...msg, id })
    })
  const workers = () => Object.values(cluster.workers ?? {}).flatMap((w) => (w !== undefined && !w.isDead() ? [w] : []))
  const handle = async (msg: Record<string, unknown>): Promise<unknown> => {
    const op = msg["op"]
    const targets = op === "profileStart" || op === "profileStop" ? workers().slice(0, 1) : workers()
    const replies: Array<Reply> = []
    // One worker at a time: each devnet's faucet spends its coins in the same order.
    for (const w of targets) replies.push(await ask(w, msg))
    const failed = replies.find((r) => !r.ok)
    if (failed !== undefined) throw new Error(failed.error)
    if (op === "batches") return replies.flatMap((r) => r.result as Array<unknown>)
    if (op === "loop") return replies.map((r) => r.result as { utilizationPct: number }).sort((a, b) => b.utilizationPct - a.utilizationPct)[0]
    if (op === "issue" && new Set(replies.map((r) => r.result)).size > 1) {
      throw new Error(`the processes' devnets gave different property ids: ${replies.map((r) => r.result).join(", ")}`)
    }
    return replies[0]?.result
  }
  process.on("message", (msg: Record<string, unknown>) => {
    // A worker's primary also sends its own messages: stop (as SIGTERM does here), metrics (none here).
    if (msg?.["type"] === stopMessage.type) return void process.kill(process.pid, "SIGTERM")
    if (typeof msg?.["op"] !== "string") return
    handle(msg).then(
      (result) => process.send?.({ id: msg["id"], ok: true, result }),
      (e: unknown) => process.send?.({ id: msg["id"], ok: false, error: e instanceof Error ? e.message : String(e) })
    )
  })
  process.channel?.unref()
}

const main = Effect.gen(function*() {
  const config = yield* nodeConfig
  if (config.processes > 1 && cluster.isPrimary) {
    relayToWorkers()
    return yield* runPrimary(config)
  }
  const context = yield* Layer.build(nodeLayer(config))
  // A worker tells its primary it is up (the primary starts the others after the first).
  if (cluster.isWorker) process.send?.(readyMessage)
  const run = <A, E>(effect: Effect.Effect<A, E, UtxoLedger>) => Effect.runPromise(Effect.provide(effect, context))

  /** One faucet payment at a time: the faucet is one key wallet (its payments must not run concurrently). */
  let chain: Promise<unknown> = Promise.resolve()
  const serial = <A>(f: () => Promise<A>): Promise<A> => {
    const next = chain.then(f, f)
    chain = next.catch(() => undefined)
    return next
  }

  const issue = (name: string, whole: bigint) => run(issueFaucetProperty(name, whole, "Bench"))

  // One send per block: each spends a confirmed coin and a confirmed Omni balance.
  const fund = (sends: ReadonlyArray<FundSend>) =>
    run(Effect.as(Effect.forEach(sends, (s) => faucetOmniSend(s.to, s.property, BigInt(s.sats)), { discard: true }), sends.length))

  let session: Session | undefined
  let heap: Session | undefined
  /** An inspector session of this process, `start`'s calls made. */
  const inspecting = async (start: (s: Session) => Promise<void>) => {
    const s = new Session()
    s.connect()
    await start(s)
    return s
  }
  /** Ends a session with `stop` and writes the profile it returned to `file`. */
  const written = async (s: Session | undefined, what: string, stop: (s: Session) => Promise<{ profile: object }>, file: string) => {
    if (s === undefined) throw new Error(`no ${what} running`)
    const { profile } = await stop(s)
    s.disconnect()
    writeFileSync(file, JSON.stringify(profile))
    return file
  }

  const handle = async (msg: Record<string, unknown>): Promise<unknown> => {
    switch (msg["op"]) {
      case "issue":
        return serial(() => issue(String(msg["name"]), BigInt(String(msg["whole"]))))
      case "fund":
        return serial(() => fund(msg["sends"] as ReadonlyArray<FundSend>))
      case "batches": {
        const copy = batches.slice()
        if (msg["reset"] === true) batches.length = 0
        return copy
      }
      case "loop": {
        return loopFigures(msg["reset"] === true)
      }
      case "fanout": {
        const copy = { ...fanoutFigures }
        if (msg["reset"] === true) Object.assign(fanoutFigures, { rounds: 0, slices: 0, writes: 0, bytes: 0, cpuMs: 0 })
        return copy
      }
      case "profileStart":
        session = await inspecting(async (s) => {
          await s.post("Profiler.enable")
          await s.post("Profiler.setSamplingInterval", { interval: 200 })
          await s.post("Profiler.start")
        })
        return true
      case "profileStop": {
        const file = await written(session, "profile", (s) => s.post("Profiler.stop"), String(msg["file"]))
        session = undefined
        return file
      }
      case "heapStart":
        heap = await inspecting(async (s) => {
          await s.post("HeapProfiler.enable")
          // Keep what minor and major GCs collected: the profile then counts what was allocated.
          await s.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never)
        })
        return true
      case "heapStop": {
        const file = await written(heap, "heap profile", (s) => s.post("HeapProfiler.stopSampling"), String(msg["file"]))
        heap = undefined
        return file
      }
      default:
        throw new Error(`unknown op ${String(msg["op"])}`)
    }
  }

  process.on("message", (msg: Record<string, unknown>) => {
    // A worker's primary also sends its own messages: stop (as SIGTERM does here), metrics (none here).
    if (msg?.["type"] === stopMessage.type) return void process.kill(process.pid, "SIGTERM")
    if (typeof msg?.["op"] !== "string") return
    handle(msg).then(
      (result) => process.send?.({ id: msg["id"], ok: true, result }),
      (e: unknown) => process.send?.({ id: msg["id"], ok: false, error: e instanceof Error ? e.message : String(e) })
    )
  })
  // The IPC channel must not keep a stopping node alive.
  process.channel?.unref()
  yield* Effect.logInfo(`bench order node: http://${config.httpHost}:${config.httpPort}`)
  return yield* Effect.never
}).pipe(Effect.scoped)

NodeRuntime.runMain(exitOnConfigError(main), { disableErrorReporting: false })
