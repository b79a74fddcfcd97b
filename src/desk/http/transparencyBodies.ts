// The transparency and registry bodies, pure: from the reserves report, the token registry and
// the job heartbeats, in the wire schemas' shapes (schemas/desk/transparency.ts).
import type { DeskStatus } from "../../../schemas/desk/transparency.ts"
import type { ReservesReport } from "../reserves/reserves.ts"
import { stablecoins } from "../reserves/reserves.ts"
import { type DeskToken, isLive, showAmount } from "../tokens/registry.ts"

/** What the running system says about which parts of the spec it serves (none of it hard-coded). */
export interface LiveFacts {
  /** EVM chains this node pays USDC on (cash-outs, redeems). */
  readonly payoutChains: ReadonlyArray<string>
  /** Omni properties rewards sample (the desk's dollar tokens, or the operator's override). */
  readonly rewardProperties: ReadonlyArray<number>
  readonly webhookSecrets: { readonly "partner-a": boolean; readonly "partner-b": boolean }
}

/**
 * Each part of the spec and whether this node serves it now: order kinds need a live token of
 * their kind (and cash-outs and redeems a chain to pay USDC on), rewards a token to sample, each
 * inbound webhook its partner's secret (the spec's 503 otherwise).
 */
export const liveParts = (tokens: ReadonlyArray<DeskToken>, facts: LiveFacts): Record<string, boolean> => {
  const liveDollar = tokens.some((t) => t.kind === "dollar" && isLive(t))
  const liveWrapped = tokens.some((t) => t.kind === "wrapped" && isLive(t))
  return {
    reserves: true,
    supply: true,
    status: true,
    "stables/assets": true,
    "wrap/assets": true,
    cashout: liveDollar && facts.payoutChains.length > 0,
    "stables/orders": liveDollar && facts.payoutChains.length > 0,
    "wrap/orders": liveWrapped,
    "wallet-link": true,
    rewards: facts.rewardProperties.length > 0,
    callbacks: true,
    "webhooks/partner-a": facts.webhookSecrets["partner-a"],
    "webhooks/partner-b": facts.webhookSecrets["partner-b"]
  }
}

/** The cadence in words: the spec's "hourly", or the shorter test and demo interval. */
export const cadenceOf = (intervalMs: number): string => (intervalMs === 3_600_000 ? "hourly" : `every ${intervalMs / 1000} s`)

/** A peg is healthy while its reserves cover its supply (collateralization ≥ 1, or nothing circulates). */
export const healthy = (collateralization: number | null): boolean => collateralization === null || collateralization >= 1

const network = (propertyId: number | null) => (propertyId === null ? "token ledger (Omni Layer), property not issued yet" : `token ledger (Omni Layer) property ${propertyId}`)
const baseNetwork = { BTC: "bitcoin", LTC: "litecoin", ETH: "ethereum", USD: "usd" } as const

export const stableAssets = (tokens: ReadonlyArray<DeskToken>, report: ReservesReport) => ({
  assets: tokens.filter((t) => t.kind === "dollar").map((t) => ({
    asset: t.code,
    name: t.name,
    propertyId: t.propertyId,
    network: network(t.propertyId),
    acceptedDeposits: [...stablecoins],
    depositChains: ["ethereum", "base", "bsc"],
    minAmount: showAmount(t.minBase),
    maxAmount: showAmount(t.maxBase),
    mintFeeBps: t.feeInBps,
    redeemFeeBps: t.feeOutBps,
    circulatingSupply: report.dollarTokens.find((d) => d.asset === t.code)?.circulatingSupply ?? "0",
    live: isLive(t)
  }))
})

export const wrapAssets = (tokens: ReadonlyArray<DeskToken>, report: ReservesReport) => ({
  assets: tokens.filter((t) => t.kind === "wrapped").map((t) => {
    const w = report.wrapped.find((x) => x.wrapped === t.code)
    return {
      asset: t.baseAsset,
      wrapped: t.code,
      network: baseNetwork[t.baseAsset],
      propertyId: t.propertyId,
      requiredConfirmations: t.requiredConfirmations,
      minAmount: showAmount(t.minBase),
      maxAmount: showAmount(t.maxBase),
      wrapFeeBps: t.feeInBps,
      unwrapFeeBps: t.feeOutBps,
      live: isLive(t),
      // Wrap and unwrap orders are taken for every live wrapped token: BTC, LTC and ETH (docs/desk-orders.md).
      wrappable: isLive(t),
      reserves: w?.reserves ?? "0",
      wrappedSupply: w?.wrappedSupply ?? "0",
      collateralization: w?.collateralization ?? null
    }
  })
})

export const supplyBody = (tokens: ReadonlyArray<DeskToken>, report: ReservesReport) => ({
  asOf: report.asOf,
  tokens: tokens.map((t) => {
    if (t.kind === "dollar") {
      const own = report.dollarTokens.find((d) => d.asset === t.code)
      return {
        symbol: t.code, chain: "token ledger (Omni Layer)", propertyId: t.propertyId, circulatingSupply: own?.circulatingSupply ?? "0",
        backingAssets: [...stablecoins], reserves: report.totalReserves, collateralization: report.collateralization
      }
    }
    const w = report.wrapped.find((x) => x.wrapped === t.code)
    return {
      symbol: t.code, chain: "token ledger (Omni Layer)", propertyId: t.propertyId, circulatingSupply: w?.wrappedSupply ?? "0",
      backingAssets: [t.baseAsset], reserves: w?.reserves ?? "0", collateralization: w?.collateralization ?? null
    }
  })
})

export interface StatusInputs {
  readonly now: number
  readonly tokens: ReadonlyArray<DeskToken>
  readonly report: ReservesReport
  readonly heartbeats: DeskStatus["heartbeats"]
  readonly lastAttestationAt: string | null
  readonly publicKey: string
  readonly attestationIntervalMs: number
  /** Redemptions (cash-outs, redeems, unwraps) whose deposit is in and whose payout is not done. */
  readonly redemptionQueueDepth: number
  readonly live: LiveFacts
}

/**
 * `ok` while every peg holds, every job's last heartbeat was good and the last attestation is at
 * most two cadences old (the first is due within one cadence of the start); else `degraded`.
 */
export const overallStatus = (i: StatusInputs, pegsHealthy: boolean): DeskStatus["status"] => {
  const attestationLate = i.lastAttestationAt !== null && i.now - Date.parse(i.lastAttestationAt) > 2 * i.attestationIntervalMs
  return pegsHealthy && i.heartbeats.every((b) => b.ok) && !attestationLate ? "ok" : "degraded"
}

export const statusBody = (i: StatusInputs): DeskStatus => {
  const pegHealth = [
    { asset: "USD", collateralization: i.report.collateralization, healthy: healthy(i.report.collateralization) },
    ...i.report.wrapped.map((w) => ({ asset: w.wrapped, collateralization: w.collateralization, healthy: healthy(w.collateralization) }))
  ]
  const live = liveParts(i.tokens, i.live)
  return {
    service: "token-desk",
    status: overallStatus(i, pegHealth.every((p) => p.healthy)),
    serverTime: i.now,
    pegHealth,
    fees: i.tokens.map((t) => ({
      asset: t.code, kind: t.kind, live: isLive(t), minAmount: showAmount(t.minBase), maxAmount: showAmount(t.maxBase), feeInBps: t.feeInBps, feeOutBps: t.feeOutBps
    })),
    instantRedemptionCapacity: i.report.breakdown.hotByChain,
    redemptionQueueDepth: i.redemptionQueueDepth,
    heartbeats: i.heartbeats,
    attestationCadence: cadenceOf(i.attestationIntervalMs),
    attestationIntervalMs: i.attestationIntervalMs,
    lastAttestationAt: i.lastAttestationAt,
    attestationPublicKey: i.publicKey,
    live,
    notYetLive: Object.entries(live).filter(([, on]) => !on).map(([part]) => part)
  }
}
