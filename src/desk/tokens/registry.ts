// The desk's token registry, pure: the dollar tokens (1:1 USD-backed; they share vaults, the
// relayer and one reserves feed, only ticker, limits and fees differ) and the wrapped coins
// (wBTC, wLTC, wETH), each an Omni managed property of the desk issuer on the token ledger, with
// limits (in the token's base units, 8 decimals), fees in basis points and a live flag.
// A token serves orders only when it is live and its property exists (`isLive`).
import { Either } from "effect"
import { formatAmount, parseAmount } from "../../chain/units.ts"

/** Omni divisible properties: 8 decimals. */
export const TOKEN_DECIMALS = 8
export const BPS_MAX = 10_000
export const CONFIRMATIONS_MAX = 1_000

export type TokenKind = "dollar" | "wrapped"
export type BaseAsset = "USD" | "BTC" | "LTC" | "ETH"

export interface DeskToken {
  readonly code: string
  readonly kind: TokenKind
  readonly baseAsset: BaseAsset
  readonly name: string
  readonly propertyId: number | null
  readonly minBase: bigint
  readonly maxBase: bigint
  /** Mint (dollar) or wrap (wrapped) fee. */
  readonly feeInBps: number
  /** Redeem (dollar) or unwrap (wrapped) fee. */
  readonly feeOutBps: number
  /** Confirmations of a deposit on the base chain before the token is granted (wrapped). */
  readonly requiredConfirmations: number
  readonly live: boolean
}

const units = (whole: string): bigint => Either.getOrThrow(parseAmount(whole, TOKEN_DECIMALS))

/**
 * What a fresh desk registers. Limits and fees are ours (the spec leaves the numbers "not
 * shown"); confirmations follow common custodial practice: 2 for BTC, 6 for LTC, 12 for ETH.
 */
export const defaultTokens: ReadonlyArray<DeskToken> = [
  { code: "SUSD", kind: "dollar", baseAsset: "USD", name: "Shardline Dollar", propertyId: null, minBase: units("10"), maxBase: units("1000000"), feeInBps: 0, feeOutBps: 10, requiredConfirmations: 0, live: false },
  { code: "XUSD", kind: "dollar", baseAsset: "USD", name: "Shardline Partner Dollar", propertyId: null, minBase: units("25"), maxBase: units("250000"), feeInBps: 5, feeOutBps: 20, requiredConfirmations: 0, live: false },
  { code: "wBTC", kind: "wrapped", baseAsset: "BTC", name: "Wrapped Bitcoin (Shardline)", propertyId: null, minBase: units("0.0001"), maxBase: units("10"), feeInBps: 10, feeOutBps: 10, requiredConfirmations: 2, live: false },
  { code: "wLTC", kind: "wrapped", baseAsset: "LTC", name: "Wrapped Litecoin (Shardline)", propertyId: null, minBase: units("0.01"), maxBase: units("1000"), feeInBps: 10, feeOutBps: 10, requiredConfirmations: 6, live: false },
  { code: "wETH", kind: "wrapped", baseAsset: "ETH", name: "Wrapped Ether (Shardline)", propertyId: null, minBase: units("0.001"), maxBase: units("100"), feeInBps: 10, feeOutBps: 10, requiredConfirmations: 12, live: false }
]

/** The chain a wrapped token's base coin lives on. */
export const baseChainOf = (asset: BaseAsset): "btc" | "ltc" | "ethereum" | undefined =>
  asset === "BTC" ? "btc" : asset === "LTC" ? "ltc" : asset === "ETH" ? "ethereum" : undefined

export const isLive = (t: DeskToken): boolean => t.live && t.propertyId !== null

export const showAmount = (base: bigint): string => Either.getOrThrow(formatAmount(base, TOKEN_DECIMALS))

/** A registry change from `desk tokens set`; absent fields stay. Amounts are decimals in the token's unit. */
export interface TokenChange {
  readonly minAmount?: string
  readonly maxAmount?: string
  readonly feeInBps?: string
  readonly feeOutBps?: string
  readonly requiredConfirmations?: string
  readonly live?: string
  readonly propertyId?: string
}

const intIn = (what: string, text: string, min: number, max: number): Either.Either<number, string> => {
  const n = /^[0-9]{1,10}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN
  return Number.isInteger(n) && n >= min && n <= max ? Either.right(n) : Either.left(`${what} must be an integer from ${min} to ${max}, got "${text}"`)
}

/** Applies a change, or says in one line why it cannot be. */
export const applyChange = (token: DeskToken, change: TokenChange): Either.Either<DeskToken, string> =>
  Either.gen(function*() {
    const amount = (what: string, text: string | undefined, current: bigint) =>
      text === undefined ? Either.right(current) : Either.mapLeft(parseAmount(text, TOKEN_DECIMALS), (e) => `${what}: ${e.message}`)
    const minBase = yield* amount("--min", change.minAmount, token.minBase)
    const maxBase = yield* amount("--max", change.maxAmount, token.maxBase)
    if (maxBase < minBase) return yield* Either.left(`the maximum (${showAmount(maxBase)}) is below the minimum (${showAmount(minBase)})`)
    const feeInBps = change.feeInBps === undefined ? token.feeInBps : yield* intIn(token.kind === "dollar" ? "--mint-fee-bps" : "--wrap-fee-bps", change.feeInBps, 0, BPS_MAX)
    const feeOutBps = change.feeOutBps === undefined ? token.feeOutBps : yield* intIn(token.kind === "dollar" ? "--redeem-fee-bps" : "--unwrap-fee-bps", change.feeOutBps, 0, BPS_MAX)
    const requiredConfirmations = change.requiredConfirmations === undefined
      ? token.requiredConfirmations
      : yield* intIn("--confirmations", change.requiredConfirmations, token.kind === "wrapped" ? 1 : 0, CONFIRMATIONS_MAX)
    const propertyId = change.propertyId === undefined ? token.propertyId : yield* intIn("--property", change.propertyId, 1, 0x7fffffff)
    let live = token.live
    if (change.live !== undefined) {
      if (change.live !== "true" && change.live !== "false") return yield* Either.left(`--live must be true or false, got "${change.live}"`)
      live = change.live === "true"
    }
    if (live && propertyId === null) return yield* Either.left(`${token.code} has no Omni property yet: give it with --property ID before --live true`)
    return { ...token, minBase, maxBase, feeInBps, feeOutBps, requiredConfirmations, propertyId, live }
  })

/** A token as the CLI and operators see it, in the spec's field names. */
export const registryView = (t: DeskToken) => ({
  code: t.code,
  kind: t.kind,
  baseAsset: t.baseAsset,
  name: t.name,
  propertyId: t.propertyId,
  minAmount: showAmount(t.minBase),
  maxAmount: showAmount(t.maxBase),
  ...(t.kind === "dollar"
    ? { mintFeeBps: t.feeInBps, redeemFeeBps: t.feeOutBps }
    : { wrapFeeBps: t.feeInBps, unwrapFeeBps: t.feeOutBps, requiredConfirmations: t.requiredConfirmations }),
  live: t.live
})
