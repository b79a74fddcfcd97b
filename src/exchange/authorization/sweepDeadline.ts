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
 * Until when (epoch ms) a failed sweep is tried again: the grant's end (its expiry, or now when it
 * is ended early) plus the grace, less the margin.
 */
export const sweepRetryUntilMs = (expiresAtMs: number, nowMs: number, sweepGraceMs: number): number =>
  Math.min(expiresAtMs, nowMs) + sweepGraceMs - sweepMarginMs

/** Whether attempt `attempt` (1-based, just failed) is tried again at `nowMs`. */
export const sweepAgain = (attempt: number, nowMs: number, untilMs: number): boolean =>
  attempt < sweepAttemptsMin || nowMs < untilMs
