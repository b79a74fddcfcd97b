// GET /api/public/v1/rewards/balance, the read side (spec: "Rewards address matching"): which
// field of the caller's member's linked wallet the address is, its balance now and the rolling
// average of the LinkedWallet's samples over the window, in total and per reward token (the
// desk's dollar tokens, rewardTokens.ts). A key reads only its own member; the answer carries
// balances and the matched field, never personal data.
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import type { RewardsBalance } from "../../../schemas/desk/walletLink.ts"
import { formatAmount } from "../../chain/units.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import type { RewardToken } from "./rewardTokens.ts"
import { averageOf } from "./sampling.ts"

/** The desk token is a divisible Omni property: 8 decimals. */
export const tokenDecimals = 8
const dayMs = 86_400_000

interface WalletRow {
  readonly signing_address: string
  readonly evm_address: string
  readonly base_address: string
  readonly token_inbox_address: string | null
}

const decimal = (base: bigint) => Either.getOrThrow(formatAmount(base, tokenDecimals))

/** Which field `address` is, by the spec's order; EVM addresses compare without case. */
const matchOf = (w: WalletRow, address: string, derived: boolean): RewardsBalance["matched"] | undefined => {
  const lower = address.toLowerCase()
  if (address === w.signing_address) return "signing_address"
  if (derived) return "derived_address"
  if (w.token_inbox_address !== null && address === w.token_inbox_address) return "token_inbox"
  if (lower === w.evm_address.toLowerCase()) return "evm_address"
  if (lower === w.base_address.toLowerCase()) return "base_address"
  return undefined
}

/** None when the member has no linked wallet holding that address. */
export const rewardsBalance = (memberId: string, address: string, days: number, tokens: ReadonlyArray<RewardToken>, nowMs = Date.now()) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const omni = yield* OmniView
    const [wallet] = yield* sql<WalletRow>`SELECT w.signing_address, w.evm_address, w.base_address, m.token_inbox_address
      FROM desk_wallets w JOIN desk_members m ON m.id = w.member_id WHERE w.member_id = ${memberId}`
    if (wallet === undefined) return Option.none<RewardsBalance>()
    const derived = yield* sql<{ address: string }>`SELECT address FROM linked_wallet_addresses WHERE member_id = ${memberId}`
    const matched = matchOf(wallet, address, derived.some((d) => d.address === address))
    if (matched === undefined) return Option.none<RewardsBalance>()
    const currents = new Map<number, bigint>()
    for (const t of tokens) {
      let held = 0n
      for (const d of derived) held += yield* omni.balance(d.address, t.propertyId)
      currents.set(t.propertyId, held)
    }
    const since = new Date(nowMs - days * dayMs)
    const rows = yield* sql<{ balance_base: string | null; slot_at: Date }>`SELECT balance_base::text AS balance_base, slot_at
      FROM linked_wallet_samples WHERE member_id = ${memberId} AND slot_at > ${since} ORDER BY slot_at`
    const stats = averageOf(rows.map((r) => (r.balance_base === null ? null : BigInt(r.balance_base))))
    const sums = yield* sql<{ property_id: string; total: string }>`SELECT property_id::text AS property_id, sum(balance_base)::text AS total
      FROM desk_wallet_token_samples WHERE member_id = ${memberId} AND slot_at > ${since} GROUP BY property_id`
    // A token's average over the same samples as the total's (a slot before the token existed counts 0).
    const tokenAverage = (propertyId: number) => {
      const sum = sums.find((r) => Number(r.property_id) === propertyId)
      return stats.sampleCount === 0 || sum === undefined ? 0n : BigInt(sum.total) / BigInt(stats.sampleCount)
    }
    const lastTaken = [...rows].reverse().find((r) => r.balance_base !== null)
    return Option.some<RewardsBalance>({
      address,
      matched,
      tokens: tokens.map((t) => ({
        asset: t.asset,
        propertyId: t.propertyId,
        currentBalance: decimal(currents.get(t.propertyId)!),
        averageDailyBalance: decimal(tokenAverage(t.propertyId))
      })),
      currentBalance: decimal([...currents.values()].reduce((a, b) => a + b, 0n)),
      averageDailyBalance: decimal(stats.average),
      days,
      sampleCount: stats.sampleCount,
      missingCount: stats.missingCount,
      lastSampleAt: lastTaken === undefined ? null : new Date(lastTaken.slot_at).toISOString()
    })
  })

/** Slots a window's sample list shows at most (a year of hours): the chart's bound. */
export const windowSamplesMax = 24 * 366

/** Every slot of the member's window, oldest first: its total balance, or null for a missed slot. */
export const windowSamples = (memberId: string, days: number, nowMs = Date.now()) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ balance_base: string | null; slot_at: Date }>`SELECT balance_base::text AS balance_base, slot_at FROM (
        SELECT balance_base, slot_at FROM linked_wallet_samples WHERE member_id = ${memberId} AND slot_at > ${new Date(nowMs - days * dayMs)}
        ORDER BY slot_at DESC LIMIT ${windowSamplesMax}) newest ORDER BY slot_at`.pipe(
      Effect.map((rows) => rows.map((r) => ({ at: new Date(r.slot_at).toISOString(), balance: r.balance_base === null ? null : decimal(BigInt(r.balance_base)) })))
    ))
