// How much fee coin a delegated address asks the sponsor for, from how fast it pays legs. A maker
// in the orders bench paid about 37 legs a second from one address and was funded 50 legs' worth
// at a time: a sponsor funding (a locked transaction, a ledger read, a broadcast) every 1.3 s,
// inside the batch that ran short (issue 22, session 28). A busy address is now funded for about
// ten seconds of its own recent rate, and tops up before it runs out. Pure.

/** Legs' worth of coin one funding carries at least, and at most (about 0.06 LTC at 5,910 sats a leg). */
export const fundingLegsMin = 50
export const fundingLegsMax = 1_000
/** The window over which an address's rate is counted, ms. */
export const recentWindowMs = 10_000
/** Below this many legs' worth left a wallet tops up after a batch, at least. */
export const lowWaterLegsMin = 20

/** Legs' worth to ask for: what this batch still needs, or the last window's legs, within the bounds. */
export const fundingLegsFor = (legsLeft: number, recentLegs: number): number =>
  Math.min(fundingLegsMax, Math.max(fundingLegsMin, legsLeft, recentLegs))

/** Legs' worth below which to top up: two seconds at the recent rate, at least lowWaterLegsMin. */
export const lowWaterFor = (recentLegs: number): number => Math.max(lowWaterLegsMin, Math.ceil((recentLegs * 2_000) / recentWindowMs))

/** A count of events over the last `windowMs`, in one-second buckets (memory bounded by the window). */
export class SlidingCount {
  private readonly buckets: Array<{ second: number; n: number }> = []

  constructor(private readonly windowMs: number) {}

  add(n: number, nowMs: number): void {
    const second = Math.floor(nowMs / 1_000)
    const last = this.buckets[this.buckets.length - 1]
    if (last !== undefined && last.second === second) last.n += n
    else this.buckets.push({ second, n })
    this.trim(nowMs)
  }

  total(nowMs: number): number {
    this.trim(nowMs)
    let n = 0
    for (const b of this.buckets) n += b.n
    return n
  }

  private trim(nowMs: number): void {
    const oldest = Math.floor((nowMs - this.windowMs) / 1_000)
    while (this.buckets.length > 0 && this.buckets[0]!.second <= oldest) this.buckets.shift()
  }
}
