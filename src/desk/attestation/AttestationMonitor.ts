// What ops alert on for the desk's attestations (deploy/prometheus/alerts.yml, "attestation
// overdue"): every node reads the latest attestation every few seconds and sets two gauges, so any
// node's /metrics answers for the whole series. The rule compares `time()` with the last one.
import { Duration, Effect, Layer, Metric, Schedule } from "effect"
import { DeskConfig } from "../DeskConfig.ts"
import { Attestations } from "./Attestations.ts"

/** How often a node reads the latest attestation for the gauges. */
export const attestationCheckMs = 10_000

export const lastAttestationSeconds = Metric.gauge("shardline_desk_attestation_last_timestamp_seconds", {
  description: "Unix time of the desk's latest attestation, seconds (0 before the first), as this node last read it"
})

export const attestationIntervalSeconds = Metric.gauge("shardline_desk_attestation_interval_seconds", {
  description: "The Attestor's cadence (SHARDLINE_ATTESTATION_INTERVAL_MS), seconds"
})

export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const attestations = yield* Attestations
  const config = yield* DeskConfig
  attestationIntervalSeconds.unsafeUpdate(config.attestationIntervalMs / 1000, [])
  lastAttestationSeconds.unsafeUpdate(0, [])
  const read = Effect.flatMap(attestations.latest, (latest) =>
    Effect.sync(() => {
      if (latest !== undefined) lastAttestationSeconds.unsafeUpdate(Date.parse(latest.attestedAt) / 1000, [])
    }))
  yield* read.pipe(
    Effect.catchAllCause((cause) => Effect.logDebug("attestation gauge: the latest attestation was not read", cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(attestationCheckMs))),
    Effect.forkScoped
  )
}))
