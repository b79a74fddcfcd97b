// The kill tests' wait: `until` (omniWorld.ts) with the message first, as those tests read.
import { until } from "./omniWorld.ts"

/** Polls `probe` every `everyMs` until it returns a value, or fails after `timeoutMs` naming `what`. */
export const waitFor = <A>(what: string, timeoutMs: number, probe: () => Promise<A | undefined>, everyMs = 200): Promise<A> =>
  until(probe, timeoutMs, what, everyMs)
