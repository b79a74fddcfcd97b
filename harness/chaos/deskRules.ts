// The desk checker's pure rules (deskChecker.ts reads the state; these judge it), kept apart so a
// unit test holds them to their edges: exact decimal amounts, reserves against supply in one
// attestation's payload, and gaps (in the attestation series, in an order's Tick chain) outside fault windows.
import type { Window } from "./windows.ts"

/** "12.5" → 1250000000n at 8 decimals, exactly (no float); more fraction digits than `decimals` are cut. */
export const unitsOf = (text: string, decimals: number): bigint => {
  const [whole = "0", frac = ""] = String(text).trim().split(".")
  if (!/^\d+$/.test(whole) || !/^\d*$/.test(frac)) throw new Error(`not a non-negative decimal: ${text}`)
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt((frac + "0".repeat(decimals)).slice(0, decimals) || "0")
}

/**
 * What one attestation's payload (reserves.ts: totalReserves, circulatingSupply, wrapped[]) shows
 * short: the dollar pool or a wrapped token whose reserves are below its supply. One line each.
 */
export const reservesShort = (payload: Record<string, unknown>): ReadonlyArray<string> => {
  const amount = (x: unknown) => unitsOf(String(x ?? "0"), 18)
  const out: Array<string> = []
  if (amount(payload["totalReserves"]) < amount(payload["circulatingSupply"])) {
    out.push(`USD reserves ${String(payload["totalReserves"])} < dollar supply ${String(payload["circulatingSupply"])}`)
  }
  for (const w of (payload["wrapped"] ?? []) as ReadonlyArray<Record<string, unknown>>) {
    if (amount(w["reserves"]) < amount(w["wrappedSupply"])) out.push(`${String(w["asset"])} reserves ${String(w["reserves"])} < ${String(w["wrapped"])} supply ${String(w["wrappedSupply"])}`)
  }
  return out
}

export interface Gap {
  /** Run clock, ms. */
  readonly fromMs: number
  readonly toMs: number
  /** The part of the gap no fault window covers, ms: what the rule judges. */
  readonly quietMs: number
}

/** How much of [from, to] the windows (merged, as faultWindows makes them) cover. */
const coveredMs = (fromMs: number, toMs: number, windows: ReadonlyArray<Window>): number =>
  windows.reduce((n, w) => n + Math.max(0, Math.min(toMs, w.toMs) - Math.max(fromMs, w.fromMs)), 0)

/**
 * The gaps between consecutive `edges` (epoch ms, in order) whose fault-free part is longer than
 * `allowedMs`; `clockZeroMs` is the epoch of the windows' run clock (the run's start).
 */
export const quietGaps = (edges: ReadonlyArray<number>, o: { readonly clockZeroMs: number; readonly allowedMs: number; readonly windows: ReadonlyArray<Window> }): ReadonlyArray<Gap> => {
  const out: Array<Gap> = []
  for (let i = 1; i < edges.length; i++) {
    const fromMs = edges[i - 1]! - o.clockZeroMs
    const toMs = edges[i]! - o.clockZeroMs
    const quietMs = toMs - fromMs - coveredMs(fromMs, toMs, o.windows)
    if (quietMs > o.allowedMs) out.push({ fromMs, toMs, quietMs })
  }
  return out
}

/**
 * Every gap in an attestation series over the run (`times`: epoch ms; the run from `runStartMs`
 * to `runEndMs`, its start and end counting as edges) whose fault-free part is longer than
 * `allowedMs`: a fault excuses the time it covers (windows on the run clock), not the whole gap.
 */
export const attestationGaps = (times: ReadonlyArray<number>, o: { readonly runStartMs: number; readonly runEndMs: number; readonly allowedMs: number; readonly windows: ReadonlyArray<Window> }): ReadonlyArray<Gap> => {
  const inRun = times.filter((t) => t >= o.runStartMs && t <= o.runEndMs).sort((a, b) => a - b)
  return quietGaps([o.runStartMs, ...inRun, o.runEndMs], { clockZeroMs: o.runStartMs, allowedMs: o.allowedMs, windows: o.windows })
}
