// A market's integer units (ticks, lots) as base units of its assets (satoshis of divisible Omni
// properties, 8 decimals), and back to the wire's decimal strings. Exact: bigint only. The market
// spec guarantees lot decimals ≤ 8 and tick + lot decimals ≤ 8 (marketSpec.ts), so every amount
// here is a whole number of satoshis.
import type { MarketFilters } from "../filters.ts"
import { formatNotional } from "../filters.ts"
import { formatUnits } from "../units.ts"
import { ASSET_DECIMALS } from "../markets/marketSpec.ts"

const pow10 = (n: number): bigint => 10n ** BigInt(n)

/** Base-asset satoshis of `lots` lots. */
export const baseUnits = (f: MarketFilters, lots: number): bigint =>
  BigInt(lots) * f.step.digits * pow10(ASSET_DECIMALS - f.step.scale)

/** Quote-asset satoshis of `lots` lots at `ticks` ticks. */
export const quoteUnits = (f: MarketFilters, ticks: number, lots: number): bigint =>
  BigInt(ticks) * f.tick.digits * BigInt(lots) * f.step.digits * pow10(ASSET_DECIMALS - f.tick.scale - f.step.scale)

/** What an open order holds of its authorization: the base it sells, or the quote it may pay at its own price. */
export const reservationOf = (f: MarketFilters, side: "BUY" | "SELL", ticks: number, openLots: number): bigint =>
  side === "SELL" ? baseUnits(f, openLots) : quoteUnits(f, ticks, openLots)

/** Satoshis as a decimal string with the asset's 8 decimals ("1.50000000"), as Binance prints amounts. */
export const formatSats = (sats: bigint): string => formatUnits(sats, { digits: 1n, scale: ASSET_DECIMALS })

/** A price in ticks as the market prints it (tickSize's decimals, at least 8 as Binance does). */
export const formatPrice = (f: MarketFilters, ticks: number): string => formatUnits(ticks, f.tick, ASSET_DECIMALS)

/** A quantity in lots as the market prints it. */
export const formatQty = (f: MarketFilters, lots: number): string => formatUnits(lots, f.step, ASSET_DECIMALS)

/** price × quantity in the quote asset. */
export const formatQuote = (f: MarketFilters, ticks: number, lots: number): string => formatSats(quoteUnits(f, ticks, lots))

export { formatNotional }

/** A decimal string in the asset's unit ("12.5") as satoshis, rounded down past 8 decimals (caps may carry more). */
export const decimalToSats = (text: string): bigint => {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text.trim())
  if (m === null) return 0n
  return BigInt(m[1]!) * pow10(ASSET_DECIMALS) + BigInt((m[2] ?? "").slice(0, ASSET_DECIMALS).padEnd(ASSET_DECIMALS, "0"))
}
