// Durable timers at the end of a chaos run, the pure part (checker.ts and deskChecker.ts read the
// rows; these judge them): how late each fired, split by whether it was due inside a fault window;
// "fired once" (a redelivery outside every fault window, a link token's Expire missing or twice);
// and an order's Tick chain, which must not go quiet beyond its tick outside fault windows.
import { type Gap, quietGaps } from "./deskRules.ts"
import { inWindow, type Window } from "./windows.ts"

export const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  if (xs.length === 0) return 0
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}

/** "p50/p99/max (n=N)" of a lateness list, ms (0s when empty). */
export const distribution = (xs: ReadonlyArray<number>): string =>
  `${percentile(xs, 50)}/${percentile(xs, 99)}/${xs.reduce((m, x) => Math.max(m, x), 0)} (n=${xs.length})`

/** One firing of a durable timer (epoch ms): its first delivery, its last and how many there were. */
export interface Firing {
  readonly entityId: string
  readonly dueMs: number
  readonly firedMs: number
  readonly lastFiredMs: number
  readonly deliveries: number
}

/**
 * How late each timer fired (first delivery − due, never below 0), split by whether it was due
 * inside a fault window (`windows` on the run clock, which starts at `runStartMs`). Timers due
 * before the run are left out.
 */
export const latenessSplit = (firings: ReadonlyArray<Pick<Firing, "dueMs" | "firedMs">>, windows: ReadonlyArray<Window>, runStartMs: number) => {
  const inside: Array<number> = []
  const outside: Array<number> = []
  for (const f of firings) {
    if (f.dueMs < runStartMs) continue
    ;(inWindow(windows, f.dueMs - runStartMs) ? inside : outside).push(Math.max(0, f.firedMs - f.dueMs))
  }
  return { inside, outside }
}

/**
 * Timers delivered more than once whose last delivery was outside every fault window. A node that
 * dies (or a database that goes) after the handler and before the cluster stores its reply makes
 * the cluster deliver the timer again: inside a fault window that is the at-least-once delivery
 * the handlers are written for; outside one nothing explains it.
 */
export const redeliveredOutsideFaults = (firings: ReadonlyArray<Firing>, windows: ReadonlyArray<Window>, runStartMs: number): ReadonlyArray<Firing> =>
  firings.filter((f) => f.deliveries > 1 && !inWindow(windows, f.lastFiredMs - runStartMs))

/**
 * Link tokens whose one Expire did not fire once: no firing although the token expired at least
 * `graceMs` before the check, or firings for more than one due time.
 */
export const linkExpiryProblems = (
  tokens: ReadonlyArray<{ readonly id: string; readonly expiresMs: number }>,
  firings: ReadonlyArray<Firing>,
  o: { readonly checkMs: number; readonly graceMs: number }
): ReadonlyArray<{ readonly id: string; readonly problem: string }> => {
  const byToken = new Map<string, Array<Firing>>()
  for (const f of firings) byToken.set(f.entityId, [...(byToken.get(f.entityId) ?? []), f])
  const out: Array<{ id: string; problem: string }> = []
  for (const t of tokens) {
    const fired = byToken.get(t.id) ?? []
    if (fired.length === 0 && t.expiresMs <= o.checkMs - o.graceMs) {
      out.push({ id: t.id, problem: `expired ${o.checkMs - t.expiresMs} ms before the check; its Expire never fired` })
    } else if (fired.length > 1) {
      out.push({ id: t.id, problem: `${fired.length} Expire firings, due at ${fired.map((f) => new Date(f.dueMs).toISOString()).join(", ")}` })
    } else if (fired.length === 1 && fired[0]!.dueMs !== t.expiresMs) {
      out.push({ id: t.id, problem: `its Expire was due at ${new Date(fired[0]!.dueMs).toISOString()}, the token expires at ${new Date(t.expiresMs).toISOString()}` })
    }
  }
  return out
}

/**
 * An order's Tick chain, from its creation through each tick that fired (and to the check, while
 * the order is still open): the stretches whose fault-free part is longer than `allowedMs`.
 */
export const tickChainGaps = (
  order: { readonly createdMs: number; readonly open: boolean },
  ticks: ReadonlyArray<Pick<Firing, "firedMs">>,
  o: { readonly checkMs: number; readonly allowedMs: number; readonly windows: ReadonlyArray<Window>; readonly runStartMs: number }
): ReadonlyArray<Gap> => {
  const fired = ticks.map((t) => t.firedMs).sort((a, b) => a - b)
  const edges = [order.createdMs, ...fired, ...(order.open ? [o.checkMs] : [])]
  return quietGaps(edges, { clockZeroMs: o.runStartMs, allowedMs: o.allowedMs, windows: o.windows })
}
