// How a node process runs and stops (docs/operations.md, "Stopping"). Like NodeRuntime.runMain,
// except that SIGTERM or SIGINT does not interrupt the node at once: it drains first.
//   1. The drain begins (src/platform/http/Drain.ts): every listener refuses new requests with a
//      503 in its service's shape and `Connection: close`.
//   2. Requests already in flight finish (their entities are still there), for at most
//      SHARDLINE_STOP_DRAIN_MS.
//   3. The node is interrupted: listeners close, shards are handed over, the embedded database
//      stops (every layer's finalizer).
//   4. Whatever hangs, the process exits by SHARDLINE_STOP_TIMEOUT_MS after the signal (code 1,
//      one line); an embedded postmaster left behind is stopped by its watchdog.
// A primary that runs worker processes stops each the same way: SIGTERM, or the IPC message
// `{type: "shardline:stop"}` (a worker started with an IPC channel).
import { makeRunMain } from "@effect/platform/Runtime"
import { Effect, type Fiber } from "effect"
import { processDrain } from "./http/Drain.ts"

export interface StopSettings {
  readonly stopDrainMs: number
  readonly stopTimeoutMs: number
}

/** Until the node has read its config: the defaults of SHARDLINE_STOP_DRAIN_MS and _TIMEOUT_MS. */
const settings: { current: StopSettings } = { current: { stopDrainMs: 10_000, stopTimeoutMs: 30_000 } }

/** The node's own settings, once read (cluster/main.ts). */
export const setStopSettings = (s: StopSettings) => Effect.sync(() => {
  settings.current = s
})

/** The IPC message a worker sends its primary once its node is up (cluster/Primary.ts). */
export const readyMessage = { type: "shardline:ready" } as const

/** The IPC message a primary sends a worker to stop it. */
export const stopMessage = { type: "shardline:stop" } as const

const isStopMessage = (m: unknown) => typeof m === "object" && m !== null && (m as { type?: unknown }).type === stopMessage.type

export const runNodeMain = makeRunMain(({ fiber, teardown }) => {
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
  let stopping = false
  const unlisten = () => {
    process.removeListener("SIGINT", stop)
    process.removeListener("SIGTERM", stop)
    process.removeListener("message", onMessage)
  }
  fiber.addObserver((exit) => {
    unlisten()
    clearInterval(keepAlive)
    teardown(exit, (code) => {
      if (stopping || code !== 0) process.exit(code)
    })
  })
  function stop() {
    if (stopping) return
    stopping = true
    unlisten()
    const { stopDrainMs, stopTimeoutMs } = settings.current
    const started = Date.now()
    setTimeout(() => {
      process.stderr.write(`shardline: not stopped ${stopTimeoutMs} ms after the signal (SHARDLINE_STOP_TIMEOUT_MS); exiting now\n`)
      process.exit(1)
    }, stopTimeoutMs).unref()
    processDrain.begin()
    void processDrain.idle(stopDrainMs).then((idle) => {
      const left = processDrain.inFlight()
      Effect.runFork(Effect.logInfo(idle
        ? `stopping: drained in ${Date.now() - started} ms; closing listeners, handing shards over`
        : `stopping: ${left} request(s) still in flight after ${stopDrainMs} ms (SHARDLINE_STOP_DRAIN_MS); closing anyway`))
      interrupt(fiber)
    })
  }
  function onMessage(m: unknown) {
    if (isStopMessage(m)) stop()
  }
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
  process.on("message", onMessage)
})

const interrupt = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) => fiber.unsafeInterruptAsFork(fiber.id())
