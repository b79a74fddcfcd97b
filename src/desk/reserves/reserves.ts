// Reserves against supply, pure: what the scan found in every vault and deposit address, and
// the circulating supply of every desk token, make the reserves report (the body of
// GET /api/public/reserves before the first attestation, and the payload of each attestation).
//
// Amounts are exact decimal strings in the asset's own unit; sums are bigint in a common scale.
// Dollar stablecoins (USDC, USDT, PYUSD, DAI) count 1:1 as USD: they back the dollar tokens
// together (one reserves feed). Each wrapped token is backed by its own base coin. The ratio
// `collateralization` (reserves ÷ supply) is the one number, rounded to 6 decimals by the
// attestation hash rule; null when nothing circulates.
import { Either } from "effect"
import { formatAmount } from "../../chain/units.ts"
import type { BaseAsset } from "../tokens/registry.ts"

export const stablecoins = ["USDC", "USDT", "PYUSD", "DAI"] as const
export type Stablecoin = (typeof stablecoins)[number]
export type ReserveAsset = Stablecoin | "BTC" | "LTC" | "ETH"

/** Where an address sits: a cold or hot vault, or a member's or order's deposit address. */
export type AddressGroup = "cold" | "hot" | "deposits"

/** One balance the scan read: `amount` in base units of an asset with `decimals`. */
export interface Holding {
  readonly chain: string
  readonly group: AddressGroup
  readonly asset: ReserveAsset
  readonly address: string
  readonly amount: bigint
  readonly decimals: number
}

export interface TokenSupply {
  readonly code: string
  readonly kind: "dollar" | "wrapped"
  readonly baseAsset: BaseAsset
  readonly propertyId: number | null
  /** Base units, 8 decimals. */
  readonly circulating: bigint
}

/** The common scale of sums: 18 decimals holds every asset here exactly. */
const SCALE = 18
const TOKEN_DECIMALS = 8
const up = (amount: bigint, decimals: number): bigint => amount * 10n ** BigInt(SCALE - decimals)
const show = (scaled: bigint): string => Either.getOrThrow(formatAmount(scaled, SCALE))

/** reserves ÷ supply to 6 decimals, exactly (no float on the way); null when nothing circulates. */
export const ratio = (reserves: bigint, supply: bigint): number | null =>
  supply === 0n ? null : Number((reserves * 1_000_000n) / supply) / 1_000_000

const isStable = (a: ReserveAsset): a is Stablecoin => (stablecoins as ReadonlyArray<string>).includes(a)
const backingOf = (t: TokenSupply): "USD" | ReserveAsset => (t.kind === "dollar" ? "USD" : t.baseAsset === "USD" ? "USD" : t.baseAsset)

const add = (m: Map<string, bigint>, key: string, v: bigint) => m.set(key, (m.get(key) ?? 0n) + v)
const shown = (m: Map<string, bigint>): Record<string, string> =>
  Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, show(v)]))

export interface ReservesReport {
  readonly asOf: string
  /** USD: every dollar stablecoin held. */
  readonly totalReserves: string
  /** Every dollar token's circulating supply together (they share the reserves). */
  readonly circulatingSupply: string
  readonly collateralization: number | null
  readonly dollarTokens: ReadonlyArray<{ readonly asset: string; readonly propertyId: number | null; readonly circulatingSupply: string }>
  readonly wrapped: ReadonlyArray<{
    readonly asset: string
    readonly wrapped: string
    readonly propertyId: number | null
    readonly reserves: string
    readonly wrappedSupply: string
    readonly collateralization: number | null
  }>
  /** USD reserves in cold vaults, hot vaults and deposit addresses not yet swept. */
  readonly coldHot: { readonly cold: string; readonly hot: string; readonly deposits: string }
  readonly breakdown: {
    readonly byChain: Record<string, Record<string, string>>
    readonly byToken: Record<string, string>
    readonly byGroup: Record<string, Record<string, string>>
    /** What the hot vaults hold per chain: the instant redemption capacity. */
    readonly hotByChain: Record<string, Record<string, string>>
  }
  readonly addressesScanned: number
}

export const reservesReport = (holdings: ReadonlyArray<Holding>, supplies: ReadonlyArray<TokenSupply>, asOf: Date, addressesScanned: number): ReservesReport => {
  let usd = 0n
  const coldHot = new Map<string, bigint>([["cold", 0n], ["hot", 0n], ["deposits", 0n]])
  const byToken = new Map<string, bigint>()
  const byChain = new Map<string, Map<string, bigint>>()
  const byGroup = new Map<string, Map<string, bigint>>()
  const hotByChain = new Map<string, Map<string, bigint>>()
  for (const h of holdings) {
    const v = up(h.amount, h.decimals)
    add(byToken, h.asset, v)
    add(byChain.get(h.chain) ?? byChain.set(h.chain, new Map()).get(h.chain)!, h.asset, v)
    add(byGroup.get(h.group) ?? byGroup.set(h.group, new Map()).get(h.group)!, h.asset, v)
    if (h.group === "hot") add(hotByChain.get(h.chain) ?? hotByChain.set(h.chain, new Map()).get(h.chain)!, h.asset, v)
    if (isStable(h.asset)) {
      usd += v
      add(coldHot, h.group, v)
    }
  }
  const dollars = supplies.filter((s) => backingOf(s) === "USD")
  const dollarSupply = dollars.reduce((n, s) => n + up(s.circulating, TOKEN_DECIMALS), 0n)
  const nested = (m: Map<string, Map<string, bigint>>) =>
    Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, shown(v)]))
  return {
    asOf: asOf.toISOString(),
    totalReserves: show(usd),
    circulatingSupply: show(dollarSupply),
    collateralization: ratio(usd, dollarSupply),
    dollarTokens: dollars.map((s) => ({ asset: s.code, propertyId: s.propertyId, circulatingSupply: show(up(s.circulating, TOKEN_DECIMALS)) })),
    wrapped: supplies.filter((s) => s.kind === "wrapped").map((s) => {
      const reserves = byToken.get(s.baseAsset) ?? 0n
      const supply = up(s.circulating, TOKEN_DECIMALS)
      return { asset: s.baseAsset, wrapped: s.code, propertyId: s.propertyId, reserves: show(reserves), wrappedSupply: show(supply), collateralization: ratio(reserves, supply) }
    }),
    coldHot: { cold: show(coldHot.get("cold")!), hot: show(coldHot.get("hot")!), deposits: show(coldHot.get("deposits")!) },
    breakdown: { byChain: nested(byChain), byToken: shown(byToken), byGroup: nested(byGroup), hotByChain: nested(hotByChain) },
    addressesScanned
  }
}
