// The desk's Attestor ticks at every top of the hour (UTC, wall clock). A test that counts
// attestations (seq 2 after one `desk attest`, three rows at the end) sees one more when its run
// crosses the hour: CI's run of 2026-11-29 started the desk transparency file at 18:59 and failed
// on seq 3. Tests that count call this first: it returns at once unless the next top of the hour
// is closer than `marginMs`, and then waits until just past it.
import { HOUR_MS } from "../../src/desk/attestation/attestation.ts"

/** Milliseconds to wait so that `marginMs` of wall time passes before the next top of the hour. */
export const waitBeforeHour = (nowMs: number, marginMs: number, pastMs = 5_000): number => {
  const next = Math.ceil((nowMs + 1) / HOUR_MS) * HOUR_MS
  return next - nowMs < marginMs ? next - nowMs + pastMs : 0
}

/** Waits, if needed, so that the next `marginMs` of the test do not cross a top of the hour. */
export const clearOfTopOfHour = async (marginMs: number): Promise<void> => {
  const ms = waitBeforeHour(Date.now(), marginMs)
  if (ms > 0) await new Promise((r) => setTimeout(r, ms))
}
