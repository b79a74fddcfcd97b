// Event-loop stalls, named where they happen. @effect/cluster gives a shard-lock refresh exactly
// its interval (1 s by default): a loop that stalls longer than that drops every shard of the
// runner ("Shard lock storage is unhealthy", docs/operations.md). A node's log then says whether
// the loop stalled just before, which is the first thing to know when reading such an episode.
//
// A plain timer, not a fiber: it measures the loop, and a fiber's lateness would add the Effect
// scheduler's. Unref'd, so it never keeps a stopping process alive.
import { Effect, Layer, Metric, Runtime } from "effect"

/** How often the loop is sampled. */
export const SAMPLE_MS = 200
/** A sample later than this is logged as a stall. */
export const STALL_LOG_MS = 700

const stallSeconds = Metric.counter("shardline_event_loop_stall_seconds_total", {
  description: `Time the event loop was stalled beyond ${STALL_LOG_MS} ms past a ${SAMPLE_MS} ms sample, summed`
})

/** How late a sample due at `dueMs` ran at `nowMs`, if that is a stall to log. */
export const stallOf = (dueMs: number, nowMs: number, logMs: number = STALL_LOG_MS): number | undefined => {
  const late = nowMs - dueMs
  return late > logMs ? late : undefined
}

export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const runFork = Runtime.runFork(yield* Effect.runtime<never>())
  const log = (ms: number) => {
    stallSeconds.unsafeUpdate(ms / 1000, [])
    runFork(Effect.logWarning(`event loop stalled ${ms} ms`))
  }
  let due = Date.now() + SAMPLE_MS
  const timer = setInterval(() => {
    const now = Date.now()
    const stall = stallOf(due, now)
    if (stall !== undefined) log(stall)
    due = now + SAMPLE_MS
  }, SAMPLE_MS)
  timer.unref()
  yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(timer)))
}))
