// The span around sending a signed transaction to a chain, so a trace shows the broadcast with
// the request that caused it. Recorded only when the node traces (src/platform/telemetry); with
// tracing off the tracer is disabled and no span is made.
import { Effect } from "effect"

export const broadcastSpan = (chain: string) => <Id extends string, E, R>(send: Effect.Effect<Id, E, R>): Effect.Effect<Id, E, R> =>
  send.pipe(
    Effect.tap((txid) => Effect.annotateCurrentSpan("tx.id", txid)),
    Effect.withSpan("chain.broadcast", { kind: "client", captureStackTrace: false, attributes: { "chain.name": chain } })
  )
