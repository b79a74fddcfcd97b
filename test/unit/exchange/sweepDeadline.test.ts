// How long a grant's end keeps trying its sweep (src/exchange/authorization/sweepDeadline.ts).
// Chaos seed 1 (3 minutes) found a grant that expired during a 7.1 s ledger RPC refusal: the sweep
// gave up after 5 tries 1 s apart and the key was destroyed with 99,811 tokens at its address. The
// sweep is now tried until shortly before the sealed key's horizon (expiry + grace).
import { describe, expect, it } from "vitest"
import { sweepAgain, sweepAttemptsMin, sweepMarginMs, sweepRetryUntilMs } from "../../../src/exchange/authorization/sweepDeadline.ts"

const graceMs = 60_000 // SHARDLINE_SWEEP_GRACE_MS's default

/** The attempts made, one a second from `startMs`, while `fails(t)`; the time of the first that succeeds, or undefined. */
const sweepOutcome = (startMs: number, untilMs: number, fails: (t: number) => boolean) => {
  for (let attempt = 1, t = startMs; ; attempt++, t += 1_000) {
    if (!fails(t)) return t
    if (!sweepAgain(attempt, t + 1, untilMs)) return undefined
  }
}

describe("the sweep's retry horizon", () => {
  it("an expiry during a 7.1 s ledger outage is swept once the ledger is back (seed 1)", () => {
    const expiry = 1_000_000
    const until = sweepRetryUntilMs(expiry, expiry + 200, graceMs)
    expect(until).toBe(expiry + graceMs - sweepMarginMs)
    const outageEnds = expiry + 7_100
    expect(sweepOutcome(expiry + 200, until, (t) => t < outageEnds)).toBeGreaterThanOrEqual(outageEnds)
    // Five tries a second apart, the rule before: the same outage outlasted them all.
    expect(Array.from({ length: 5 }, (_, i) => expiry + 200 + i * 1_000).every((t) => t < outageEnds)).toBe(true)
  })

  it("stops before the sealed key's horizon, and never before 5 tries", () => {
    const expiry = 1_000_000
    const until = sweepRetryUntilMs(expiry, expiry, graceMs)
    expect(sweepOutcome(expiry, until, () => true)).toBeUndefined()
    expect(sweepAgain(100, expiry + graceMs - sweepMarginMs, until)).toBe(false)
    expect(sweepAgain(100, expiry + graceMs - sweepMarginMs - 1, until)).toBe(true)
    // A zero grace (or an end long after expiry): the horizon is past, the minimum tries still run.
    const past = sweepRetryUntilMs(expiry, expiry + 10 * graceMs, 0)
    expect(sweepAgain(sweepAttemptsMin - 1, expiry + 10 * graceMs, past)).toBe(true)
    expect(sweepAgain(sweepAttemptsMin, expiry + 10 * graceMs, past)).toBe(false)
  })

  it("a grant ended early (EndNow) counts its grace from now, not from its later expiry", () => {
    const now = 1_000_000
    expect(sweepRetryUntilMs(now + 3_600_000, now, graceMs)).toBe(now + graceMs - sweepMarginMs)
    // Its key's horizon is far off (sealed to expiry + grace): not a reason to try for an hour.
    expect(sweepRetryUntilMs(now + 3_600_000, now, graceMs, now + 3_600_000 + graceMs + 30_000)).toBe(now + graceMs - sweepMarginMs)
  })

  it("a late expiry tries until the key's real horizon, the end of its sealing epoch (seed 1, session 16)", () => {
    // The chaos world's 10 s grace and 30 s epochs; the expiry timer fired 24 s late, into a 7.1 s
    // ledger refusal. Counting from expiry + grace, the horizon looked past: 5 tries, all refused,
    // and the key went with 99,986 tokens at the delegated address.
    const chaosGraceMs = 10_000
    const periodMs = 30_000
    const expiry = 3_000_000 - chaosGraceMs + 1_000 // expiry + grace just inside an epoch: the horizon is ~29 s after it
    const horizon = (Math.floor((expiry + chaosGraceMs) / periodMs) + 1) * periodMs
    const firedAt = expiry + 24_000
    const refusedUntil = firedAt + 7_100
    const before = sweepRetryUntilMs(expiry, firedAt, chaosGraceMs)
    expect(sweepOutcome(firedAt, before, (t) => t < refusedUntil)).toBeUndefined()
    const until = sweepRetryUntilMs(expiry, firedAt, chaosGraceMs, horizon)
    expect(until).toBe(horizon - sweepMarginMs)
    expect(sweepOutcome(firedAt, until, (t) => t < refusedUntil)).toBeGreaterThanOrEqual(refusedUntil)
    // Never earlier than the grace's bound, whatever the horizon says.
    expect(sweepRetryUntilMs(expiry, firedAt, chaosGraceMs, expiry)).toBe(expiry + chaosGraceMs - sweepMarginMs)
  })
})
