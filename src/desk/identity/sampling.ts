// The LinkedWallet's sampling rule, pure (spec: "balance sampling: hourly; rewards average window
// set by days"). Slots are multiples of the interval. A slot's sample is taken when its timer
// fires within half an interval of the slot; a slot whose time passed without that (the cluster
// was down, the timer came late) is recorded as missing, never invented from a later balance.
import { GAP_LIMIT } from "../../chain/xpubScan.ts"

/** Slots one firing may record as missing (a year of hours): bounded work after a long outage. */
export const MISSING_SLOTS_MAX = 24 * 366

export interface SamplingPlan {
  /** Slots to record as missing, oldest first. */
  readonly missing: ReadonlyArray<number>
  /** The slot to sample now, if its window is still open. */
  readonly sample: number | undefined
  /** The next timer's slot. */
  readonly next: number
}

export const slotOf = (ms: number, intervalMs: number) => Math.floor(ms / intervalMs) * intervalMs
/** The first slot at or after `ms`. */
export const nextSlotAt = (ms: number, intervalMs: number) => Math.ceil(ms / intervalMs) * intervalMs

/**
 * What one firing of the Sample timer for `firedSlotMs` does at `nowMs`, given the newest slot
 * already recorded (sampled or missing). A timer for a slot already recorded does nothing new.
 */
export const planSampling = (input: {
  readonly firedSlotMs: number
  readonly lastRecordedMs: number | undefined
  readonly nowMs: number
  readonly intervalMs: number
}): SamplingPlan => {
  const { intervalMs, nowMs } = input
  const current = slotOf(nowMs, intervalMs)
  const from = input.lastRecordedMs === undefined ? slotOf(input.firedSlotMs, intervalMs) : input.lastRecordedMs + intervalMs
  const open = nowMs - current <= intervalMs / 2
  const missing: Array<number> = []
  const lastMissing = open ? current - intervalMs : current
  // Only the newest MISSING_SLOTS_MAX are written: older gaps still show as absent slots.
  for (let s = Math.max(from, lastMissing - (MISSING_SLOTS_MAX - 1) * intervalMs); s <= lastMissing; s += intervalMs) missing.push(s)
  const sample = open && from <= current ? current : undefined
  return { missing, sample, next: current + intervalMs }
}

/** How many addresses a branch must have derived: up to the last used one plus the gap limit. */
export const windowSize = (usedIndexes: ReadonlyArray<number>, gapLimit = GAP_LIMIT): number =>
  (usedIndexes.length === 0 ? 0 : Math.max(...usedIndexes) + 1) + gapLimit

export interface WindowStats {
  readonly sampleCount: number
  readonly missingCount: number
  /** Mean of the samples, base units, rounded down; 0 with no sample. */
  readonly average: bigint
}

/** The rolling average over a window's rows (null balance = a missing slot). */
export const averageOf = (rows: ReadonlyArray<bigint | null>): WindowStats => {
  const taken = rows.filter((r): r is bigint => r !== null)
  const sum = taken.reduce((a, b) => a + b, 0n)
  return { sampleCount: taken.length, missingCount: rows.length - taken.length, average: taken.length === 0 ? 0n : sum / BigInt(taken.length) }
}
