// A seeded generator (mulberry32): the same seed gives the same schedule and the same workload,
// so a run that found a violation can be run again from the seed it printed.
export interface Rng {
  /** A float in [0, 1). */
  readonly next: () => number
  /** An integer in [lo, hi], both included. */
  readonly int: (lo: number, hi: number) => number
  readonly pick: <A>(xs: ReadonlyArray<A>) => A
  readonly chance: (p: number) => boolean
  /** An independent stream for one part of the run (the nemesis, one client), so adding a client does not move the others. */
  readonly fork: (label: string) => Rng
}

const hash = (s: string): number => {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}

export const makeRng = (seed: number): Rng => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1))
  return {
    next,
    int,
    pick: (xs) => xs[int(0, xs.length - 1)]!,
    chance: (p) => next() < p,
    fork: (label) => makeRng((seed ^ hash(label)) >>> 0)
  }
}
