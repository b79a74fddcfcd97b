// Cash-out's pure rules: which token cash-out takes, the member's effective fee, what a coupon
// may do to it (only lower it), coupon codes, and how a wire amount (a JSON number or a decimal
// string in the token's unit) becomes base units. No I/O.
import { Either } from "effect"
import { validateLedgerAddress } from "../../chain/address.ts"
import { evmPayoutAddress } from "../../chain/evm/payoutAddress.ts"
import { parseAmount } from "../../chain/units.ts"
import { BPS_MAX, type DeskToken, TOKEN_DECIMALS } from "../tokens/registry.ts"

/**
 * The dollar token cash-out redeems for USDC (spec: "a 1:1 USD-backed token"): the desk's first
 * dollar token. Its registry row carries cash-out's live flag, limits and default fee.
 */
export const CASHOUT_TOKEN = "SUSD"

/** The fee a member's orders pay before any coupon: the negotiated fee, else the token's redeem fee. */
export const memberFeeBps = (token: DeskToken, negotiated: number | null): number => negotiated ?? token.feeOutBps

export interface Coupon {
  readonly code: string
  readonly feeBps: number
  readonly usesMax: number | null
  readonly uses: number
  readonly expiresAt: Date | null
}

export type CouponCheck =
  | { readonly valid: true; readonly feeBps: number; readonly lowers: boolean }
  | { readonly valid: false; readonly reason: string }

/**
 * A coupon's effect on a fee: valid while unexpired and not used up; it can only lower the fee,
 * so the fee it applies is the lower of the two (a coupon above the member's fee changes nothing).
 */
export const applyCoupon = (coupon: Coupon | undefined, feeBps: number, now: Date): CouponCheck => {
  if (coupon === undefined) return { valid: false, reason: "no such coupon" }
  if (coupon.expiresAt !== null && coupon.expiresAt.getTime() <= now.getTime()) return { valid: false, reason: "the coupon has expired" }
  if (coupon.usesMax !== null && coupon.uses >= coupon.usesMax) return { valid: false, reason: "the coupon is used up" }
  return { valid: true, feeBps: Math.min(coupon.feeBps, feeBps), lowers: coupon.feeBps < feeBps }
}

/** Coupon codes: 3 to 40 of A-Z 0-9 _ -, matched case-insensitively (stored upper-case). */
export const normalizeCouponCode = (text: string): Either.Either<string, string> => {
  const code = text.trim().toUpperCase()
  return /^[A-Z0-9_-]{3,40}$/.test(code) ? Either.right(code) : Either.left("a coupon code is 3 to 40 letters, digits, _ or -")
}

/** A coupon's fee: an integer number of basis points, 0 to 10000. */
export const parseCouponFee = (text: string): Either.Either<number, string> =>
  /^\d{1,5}$/.test(text) && Number(text) <= BPS_MAX ? Either.right(Number(text)) : Either.left(`--fee-bps must be an integer from 0 to ${BPS_MAX}`)

/** A coupon's use count: a positive integer. */
export const parseUses = (text: string): Either.Either<number, string> =>
  /^\d{1,9}$/.test(text) && Number(text) > 0 ? Either.right(Number(text)) : Either.left("--uses must be a positive integer")

/**
 * A wire amount in the token's unit to base units. A JSON number arrives as a float: its
 * shortest round-trip text is the digits the client wrote when they fit a double (15
 * significant digits), which every amount within the limits does; exponent forms are refused.
 */
export const amountBase = (amount: number | string, decimals = TOKEN_DECIMALS): Either.Either<bigint, string> => {
  const text = typeof amount === "number" ? (Number.isFinite(amount) ? String(amount) : "") : amount.trim()
  return Either.mapLeft(parseAmount(text, decimals), (e) => `amount: ${e.message}`)
}

/** `bps` as a percentage number (10 bps = 0.1). */
export const feePercent = (bps: number): number => bps / 100

/** A USDC payout address: a 0x address, EIP-55 checksum checked when mixed case; answered checksummed. */
export const evmAddressInput = (what: string, text: string): Either.Either<`0x${string}`, string> => {
  const t = text.trim()
  if (!/^0x[0-9a-fA-F]{40}$/.test(t)) return Either.left(`${what} must be an EVM address: 0x and 40 hex digits`)
  return Either.mapLeft(evmPayoutAddress(t), (e) => `${what}: ${e.message}`)
}

/** A token-ledger address by the ledger address rule (bech32 refused, pointing to the legacy T address). */
export const ledgerAddressInput = (what: string, text: string): Either.Either<string, string> => {
  const check = validateLedgerAddress(text)
  return check.valid ? Either.right(text) : Either.left(`${what}: ${check.error}`)
}
