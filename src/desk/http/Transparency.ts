// What the transparency and registry routes answer, from a node-local cache: each body is built
// at most once per `cacheTtl` per node (a live scan, the registry, the latest attestation, the
// history of each range), so a steady stream of public reads costs no database round trip and
// no chain read. Clients are told the same age (`Cache-Control: public, max-age=30`).
// Before the first attestation exists, the reserves come from a live scan; after, from the
// latest attestation's payload. The wrap registry always shows live reserves (spec: "live
// reserves").
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { type DeskStatus, ReservesBody, StablesBody, SupplyBody, WrapBody } from "../../../schemas/desk/transparency.ts"
import { EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { DeskConfig } from "../DeskConfig.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { rewardTokens } from "../identity/rewardTokens.ts"
import type { AttestationPoint } from "../attestation/attestation.ts"
import { Attestations, type HistoryRange } from "../attestation/Attestations.ts"
import type { ReservesReport } from "../reserves/reserves.ts"
import { ReserveScanner } from "../reserves/ReserveScanner.ts"
import { listTokens } from "../tokens/tokenStore.ts"
import { stableAssets, statusBody, supplyBody, wrapAssets } from "./transparencyBodies.ts"

/** How long a node serves a body before building it again; also the clients' max-age. */
export const cacheTtlSec = 30
const cacheTtl = Duration.seconds(cacheTtlSec)

/** The routes the fast lane may answer: one body per path, no query, no clock in it. */
export const fastPaths = ["/api/public/reserves", "/api/public/supply", "/api/public/v1/stables/assets", "/api/public/v1/wrap/assets"] as const
type FastPath = (typeof fastPaths)[number]

export interface TransparencyShape {
  /** The JSON last built for a fast path, while younger than the cache age (else undefined). */
  readonly fastBody: (path: string) => string | undefined
  readonly reserves: Effect.Effect<ReservesBody>
  readonly history: (range: HistoryRange) => Effect.Effect<{ readonly range: HistoryRange; readonly points: ReadonlyArray<AttestationPoint> }>
  readonly supply: Effect.Effect<typeof SupplyBody.Type>
  readonly status: Effect.Effect<DeskStatus>
  readonly stables: Effect.Effect<typeof StablesBody.Type>
  readonly wrap: Effect.Effect<typeof WrapBody.Type>
}

export class Transparency extends Context.Tag("shardline/desk/Transparency")<Transparency, TransparencyShape>() {}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const scanner = yield* ReserveScanner
  const attestations = yield* Attestations
  const omni = yield* OmniView
  const config = yield* DeskConfig
  const evm = yield* EvmLedgers
  const cached = <A, E>(effect: Effect.Effect<A, E>) => Effect.cachedWithTTL(Effect.orDie(effect), cacheTtl)

  const liveReport = yield* cached(Effect.map(scanner.scan, (s) => s.report))
  const tokens = yield* cached(Effect.provideService(listTokens, SqlClient.SqlClient, sql))
  const latest = yield* cached(attestations.latest)
  const heartbeats = yield* cached(sql<{ job: string; beat_at: Date; ok: boolean; detail: string }>`SELECT job, beat_at, ok, detail FROM desk_heartbeats ORDER BY job`)
  const queueDepth = yield* cached(sql<{ n: string }>`SELECT count(*)::text AS n FROM desk_orders
    WHERE kind IN ('cashout', 'redeem', 'unwrap') AND status IN ('deposit_seen', 'deposit_confirmed', 'burning', 'paying')`)
  const rewarded = yield* cached(Effect.provideService(rewardTokens(config.deskTokenProperty), SqlClient.SqlClient, sql))
  const ranges = new Map<HistoryRange, Effect.Effect<ReadonlyArray<AttestationPoint>>>()
  for (const range of ["24h", "7d", "30d", "90d", "all"] as const) ranges.set(range, yield* cached(attestations.history(range)))

  /** The latest attestation's report, or a live scan before the first. */
  type Current = { readonly point: AttestationPoint | undefined; readonly report: ReservesReport }
  const current: Effect.Effect<Current> = Effect.flatMap(latest, (point): Effect.Effect<Current> =>
    point === undefined
      ? Effect.map(liveReport, (report) => ({ point: undefined, report }))
      : Effect.succeed({ point, report: point.payload as unknown as ReservesReport }))

  const reserves: TransparencyShape["reserves"] = Effect.map(current, ({ point, report }) => {
    if (point === undefined) return { source: "live-scan" as const, attestation: null, reserves: report }
    const { payload: _payload, ...attestation } = point
    return { source: "attestation" as const, attestation, reserves: report }
  })

  const status: TransparencyShape["status"] = Effect.gen(function*() {
    const [{ point, report }, list, beats, height, queued, sampled] = yield* Effect.all([current, tokens, heartbeats, omni.height, queueDepth, rewarded])
    return statusBody({
      now: Date.now(),
      tokens: list,
      report,
      heartbeats: [
        ...beats.map((b) => ({ job: b.job, at: b.beat_at.toISOString(), ok: b.ok, detail: b.detail })),
        { job: "omni-view", at: new Date().toISOString(), ok: height >= 0, detail: `ledger height ${height}` }
      ],
      lastAttestationAt: point?.attestedAt ?? null,
      publicKey: attestations.publicKey,
      attestationIntervalMs: config.attestationIntervalMs,
      redemptionQueueDepth: Number(queued[0]?.n ?? 0),
      live: {
        payoutChains: evm.chains,
        rewardProperties: sampled.map((t) => t.propertyId),
        webhookSecrets: { "partner-a": Option.isSome(config.webhookSecretPartnerA), "partner-b": Option.isSome(config.webhookSecretPartnerB) }
      }
    })
  })

  // What the Effect handlers built last, encoded as they encode it, for the fast lane.
  const built = new Map<string, { readonly body: string; readonly at: number }>()
  const keep = <A, I>(path: FastPath, schema: Schema.Schema<A, I>, effect: Effect.Effect<A>): Effect.Effect<A> => {
    const encode = Schema.encodeSync(schema)
    return Effect.tap(effect, (body) => Effect.sync(() => built.set(path, { body: JSON.stringify(encode(body)), at: Date.now() })))
  }
  const fastBody: TransparencyShape["fastBody"] = (path) => {
    const hit = built.get(path)
    return hit !== undefined && Date.now() - hit.at < cacheTtlSec * 1000 ? hit.body : undefined
  }

  return Transparency.of({
    fastBody,
    reserves: keep("/api/public/reserves", ReservesBody, reserves),
    history: (range) => Effect.map(ranges.get(range)!, (points) => ({ range, points })),
    supply: keep("/api/public/supply", SupplyBody, Effect.flatMap(current, ({ report }) => Effect.map(tokens, (list) => supplyBody(list, report)))),
    status,
    // The registries show live figures (the scan, cached like every body here), as wrap does: a
    // mint's new supply should not wait for the next hourly attestation.
    stables: keep("/api/public/v1/stables/assets", StablesBody, Effect.flatMap(liveReport, (report) => Effect.map(tokens, (list) => stableAssets(list, report)))),
    wrap: keep("/api/public/v1/wrap/assets", WrapBody, Effect.flatMap(liveReport, (report) => Effect.map(tokens, (list) => wrapAssets(list, report))))
  })
})

export const layer = Layer.effect(Transparency, make)
