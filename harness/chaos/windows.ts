// Fault windows: from a fault's start to the end of its span plus the time the system is given to
// recover (shards move after the lock expiry, pools reconnect). Answers inside a window may be 5xx
// (retryable, the workload retries them); outside every window none may be.
import { faultSpanMs, type ScheduledFault } from "./schedule.ts"

/** After a fault ends: lock expiry (4 s) + a poll + reconnects and a node's restart, with margin. */
export const recoveryMs = 20_000

export interface Window {
  readonly fromMs: number
  readonly toMs: number
}

/** Windows on the run's clock (ms since the run started), merged where they overlap. */
export const faultWindows = (faults: ReadonlyArray<ScheduledFault & { readonly startedAtMs?: number; readonly endedAtMs?: number }>): ReadonlyArray<Window> => {
  const raw = faults
    .map((f) => ({ fromMs: f.startedAtMs ?? f.atMs, toMs: (f.endedAtMs ?? (f.startedAtMs ?? f.atMs) + faultSpanMs(f.fault)) + recoveryMs }))
    .sort((a, b) => a.fromMs - b.fromMs)
  const out: Array<Window> = []
  for (const w of raw) {
    const last = out[out.length - 1]
    if (last !== undefined && w.fromMs <= last.toMs) out[out.length - 1] = { fromMs: last.fromMs, toMs: Math.max(last.toMs, w.toMs) }
    else out.push(w)
  }
  return out
}

export const inWindow = (windows: ReadonlyArray<Window>, atMs: number): boolean => windows.some((w) => atMs >= w.fromMs && atMs <= w.toMs)
