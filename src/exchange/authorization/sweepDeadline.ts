// How long a grant's end may keep trying to sweep its delegated address. The key is sealed to the
// epoch of expiry + SHARDLINE_SWEEP_GRACE_MS (keyEpochs.ts): past it the key is gone whatever we
// do, so that is the horizon, less a margin for the sweep's own broadcast. Before, the sweep gave
// up after 5 tries 1 s apart and the key was destroyed with the tokens still at its address (chaos
// seed 1, 3 minutes: a grant expired during a 7.1 s ledger RPC refusal; 99,811 tokens stranded).

/** Kept before the sealed key's horizon for the last attempt's broadcast. */
export const sweepMarginMs = 5_000
/** Tries made however short the horizon (a zero grace, an end long after expiry). */
export const sweepAttemptsMin = 5

/**
 * Until when (epoch ms) a failed sweep is tried again: the sealed key's horizon (the end of the
 * epoch it is sealed to, when the ratchet destroys it) less the margin; without it, the grant's end
 * (its expiry, or now when it is ended early) plus the grace, less the margin, which is the
 * horizon's lower bound. The horizon is up to one epoch later than that bound: an expiry whose
 * timer fired late (a loaded box, chaos seed 1 in session 16: 15–24 s late with a 10 s grace) has
 * that much more time to sweep through a ledger outage. A grant ended before its expiry (replaced)
 * keeps the bound: its key is deleted when its end is done, not at the horizon.
 */
export const sweepRetryUntilMs = (expiresAtMs: number, nowMs: number, sweepGraceMs: number, keyHorizonMs?: number): number =>
  keyHorizonMs !== undefined && nowMs >= expiresAtMs ? Math.max(keyHorizonMs, expiresAtMs + sweepGraceMs) - sweepMarginMs
    : Math.min(expiresAtMs, nowMs) + sweepGraceMs - sweepMarginMs

/** Whether attempt `attempt` (1-based, just failed) is tried again at `nowMs`. */
export const sweepAgain = (attempt: number, nowMs: number, untilMs: number): boolean =>
  attempt < sweepAttemptsMin || nowMs < untilMs
