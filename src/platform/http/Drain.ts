// A stopping node's HTTP side (docs/operations.md, "Stopping"). Once the drain has begun, every
// listener of the process answers each new request 503 in its service's shape with
// `Connection: close` (so keep-alive clients let go of the node), while the requests already
// handed to the Effect app run to their end. The node's stop (src/platform/NodeMain.ts) waits for
// `idle` before it closes the listeners and the cluster, so nothing in flight loses its entity.
// One drain per process: a signal stops the whole process, whichever listener it serves.
import type { ServerResponse } from "node:http"

export interface Drain {
  /** True once the node is stopping: new requests are refused. */
  readonly draining: () => boolean
  /** Starts the drain (idempotent). */
  readonly begin: () => void
  /** Requests handed to the Effect app and not answered yet. */
  readonly inFlight: () => number
  /** Counts `res` as in flight until it is finished or its connection closed. */
  readonly track: (res: ServerResponse) => void
  /** Resolves true once nothing is in flight, false when `timeoutMs` passed first. */
  readonly idle: (timeoutMs: number) => Promise<boolean>
}

/** How often `idle` looks at the count. */
const idlePollMs = 25

export const makeDrain = (): Drain => {
  let draining = false
  let inFlight = 0
  return {
    draining: () => draining,
    begin: () => {
      draining = true
    },
    inFlight: () => inFlight,
    track: (res) => {
      if (res.writableFinished || res.destroyed) return // answered already (a synchronous refusal)
      inFlight++
      let counted = true
      const done = () => {
        if (!counted) return
        counted = false
        inFlight--
      }
      res.once("finish", done)
      res.once("close", done)
    },
    idle: async (timeoutMs) => {
      const deadline = Date.now() + timeoutMs
      while (inFlight > 0) {
        if (Date.now() >= deadline) return false
        await new Promise((r) => setTimeout(r, idlePollMs))
      }
      return true
    }
  }
}

/** This process's drain. */
export const processDrain: Drain = makeDrain()
