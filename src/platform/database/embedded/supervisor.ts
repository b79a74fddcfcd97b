// Keeps an embedded engine running for its owner: when the server process dies it is started
// again on the same port (so the URL, and every pool using it, stay valid), a bounded number of
// times with a growing pause; after that the owner is told to give up. See
// docs/embedded-postgres.md, "Supervision".
import { isAlive, sleep } from "./processes.ts"

/** How often the server's pid is checked (ms). */
export const WATCH_INTERVAL_MS = 250
/** Restart attempts after one death, and the pause before the first (doubled each time). */
export const RESTART_ATTEMPTS_MAX = 5
export const RESTART_BACKOFF_BASE_MS = 250

export interface Running {
  readonly url: string
  readonly serverPid: number
  readonly stop: () => Promise<void>
}

export interface SupervisionEvents {
  /** The server process is gone; restarts begin. */
  readonly onDown?: (info: { readonly serverPid: number }) => void
  /** Running again after a death: how long it was down and how many attempts it took. */
  readonly onUp?: (info: { readonly serverPid: number; readonly downMs: number; readonly attempts: number }) => void
  /** Every attempt failed: the owner should exit non-zero so a process manager can restart it. */
  readonly onGiveUp?: (info: { readonly attempts: number; readonly lastError: string }) => void
}

export type EngineStatus = "up" | "restarting" | "failed" | "stopped"

export interface Supervised {
  readonly current: () => Running
  readonly status: () => EngineStatus
  readonly stop: () => Promise<void>
}

export const supervise = (
  first: Running,
  restart: () => Promise<Running>,
  events: SupervisionEvents & { readonly onRestarted?: (r: Running) => void }
): Supervised => {
  let running = first
  let status: EngineStatus = "up"
  let recovering: Promise<void> | undefined
  // A function, not a comparison: stop() changes status while recover() awaits.
  const stopped = () => status === "stopped"

  const recover = async (): Promise<void> => {
    const downAt = Date.now()
    status = "restarting"
    events.onDown?.({ serverPid: running.serverPid })
    let lastError = ""
    for (let attempt = 1; attempt <= RESTART_ATTEMPTS_MAX; attempt++) {
      await sleep(RESTART_BACKOFF_BASE_MS * 2 ** (attempt - 1))
      if (stopped()) return
      try {
        running = await restart()
        if (stopped()) return void (await running.stop())
        status = "up"
        events.onRestarted?.(running)
        events.onUp?.({ serverPid: running.serverPid, downMs: Date.now() - downAt, attempts: attempt })
        return
      } catch (e) {
        lastError = e instanceof Error ? e.message.split("\n")[0]! : String(e)
      }
    }
    status = "failed"
    events.onGiveUp?.({ attempts: RESTART_ATTEMPTS_MAX, lastError })
  }

  const timer = setInterval(() => {
    if (status !== "up" || recovering !== undefined || isAlive(running.serverPid)) return
    recovering = recover().finally(() => (recovering = undefined))
  }, WATCH_INTERVAL_MS)
  timer.unref()

  return {
    current: () => running,
    status: () => status,
    stop: async () => {
      clearInterval(timer)
      const wasFailed = status === "failed"
      status = "stopped"
      await recovering
      if (!wasFailed) await running.stop()
    }
  }
}
