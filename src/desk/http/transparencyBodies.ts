// The transparency and registry bodies, pure: from the reserves report, the token registry and
// the job heartbeats, in the wire schemas' shapes (schemas/desk/transparency.ts).
import type { DeskStatus } from "../../../schemas/desk/transparency.ts"
import type { ReservesReport } from "../reserves/reserves.ts"
import { stablecoins } from "../reserves/reserves.ts"
import { type DeskToken, isLive, showAmount } from "../tokens/registry.ts"

/** Spec parts not served yet; shrinks as they land. */
export const notYetLive = ["cashout", "stables/orders", "wrap/orders", "wallet-link", "rewards", "callbacks", "webhooks"] as const

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
}

export const statusBody = (i: StatusInputs): DeskStatus => ({
  service: "token-desk",
  status: "ok",
  serverTime: i.now,
  pegHealth: [
    { asset: "USD", collateralization: i.report.collateralization, healthy: healthy(i.report.collateralization) },
    ...i.report.wrapped.map((w) => ({ asset: w.wrapped, collateralization: w.collateralization, healthy: healthy(w.collateralization) }))
  ],
  fees: i.tokens.map((t) => ({
    asset: t.code, kind: t.kind, live: isLive(t), minAmount: showAmount(t.minBase), maxAmount: showAmount(t.maxBase), feeInBps: t.feeInBps, feeOutBps: t.feeOutBps
  })),
  instantRedemptionCapacity: i.report.breakdown.hotByChain,
  redemptionQueueDepth: 0,
  heartbeats: i.heartbeats,
  attestationCadence: "hourly",
  lastAttestationAt: i.lastAttestationAt,
  attestationPublicKey: i.publicKey,
  notYetLive: [...notYetLive]
})
