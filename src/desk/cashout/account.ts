// A member's cash-out account: the permanent deposit addresses (derived from the desk's HD tree
// on first ask, then the same forever), the saved USDC payout address, and the fee in force.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CashoutAccount } from "../../../schemas/desk/cashout.ts"
import type { DeskCaller } from "../../../schemas/desk/security.ts"
import { findToken } from "../tokens/tokenStore.ts"
import { DeskWallets } from "../wallets/DeskWallets.ts"
import { CASHOUT_TOKEN, feePercent, memberFeeBps } from "./policy.ts"

/** The cash-out token's registry row; registered on every node's first start, so always there. */
export const cashoutToken = Effect.flatMap(findToken(CASHOUT_TOKEN), (t) =>
  t === undefined ? Effect.dieMessage(`desk token ${CASHOUT_TOKEN} is not registered`) : Effect.succeed(t))

export interface MemberAccount extends CashoutAccount {
  /** The linked wallet's token-ledger address, if linked. */
  readonly tokenPayoutAddress: string | null
}

export const memberAccount = (member: Pick<DeskCaller, "memberId" | "feeBps">) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wallets = yield* DeskWallets
    const token = yield* cashoutToken
    const owner = { purpose: "member" as const, owner: member.memberId, memberId: member.memberId }
    const ledger = yield* wallets.depositAddress({ chain: "ledger", ...owner })
    const evm = yield* wallets.depositAddress({ chain: "ethereum", ...owner })
    // The permanent token-swap inbox rewards matching reads (migration 0014) is this address.
    const [row] = yield* sql<{ usdc_payout_address: string | null; token_payout_address: string | null }>`UPDATE desk_members
      SET token_inbox_address = COALESCE(token_inbox_address, ${ledger.address})
      WHERE id = ${member.memberId} RETURNING usdc_payout_address, token_payout_address`
    const fee = memberFeeBps(token, member.feeBps)
    return {
      depositAddress: ledger.address,
      evmAddress: evm.address,
      payoutAddress: row?.usdc_payout_address ?? null,
      redeemFeeBps: fee,
      defaultRedeemFeeBps: token.feeOutBps,
      feePercent: feePercent(fee),
      tokenPayoutAddress: row?.token_payout_address ?? null
    } satisfies MemberAccount
  })

/** The account as the wire shows it (the linked token address is not part of it). */
export const accountView = ({ tokenPayoutAddress: _, ...view }: MemberAccount): CashoutAccount => view

export const savePayoutAddress = (memberId: string, address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`UPDATE desk_members SET usdc_payout_address = ${address} WHERE id = ${memberId}`))
