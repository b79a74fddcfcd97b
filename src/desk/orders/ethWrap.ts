// ETH wrapping on the desk's ethereum ledger. A wrap's deposit: the first native payment to the
// order's own EVM address (a transaction of its own; see nativeTransfers.ts) above the block the
// order was made at, with its confirmations. An unwrap's payout: native ETH from the EVM hot
// wallet, its nonce chosen under the cross-node nonce guard and recorded with its bytes and sender
// in desk_order_legs before it is sent (as the USDC payout, `evmPayoutLeg`); a recorded payout is
// followed and re-sent by `ensureEvmSent`.
import { Effect } from "effect"
import type { EvmInvalidInput, EvmLedger, EvmRpcError } from "../../chain/evm/EvmLedger.ts"
import type { DepositLook } from "./depositScan.ts"
import { clearFinal, type EvmDepositCursor, sighted } from "./evmDepositScan.ts"
import { evmLegOnce } from "./legs.ts"

/** An ETH unwrap's payout: native ETH from the hot wallet, made once (legs.ts `evmLegOnce`). The hash. */
export const evmNativePayoutLeg = (orderId: string, ledger: EvmLedger, to: string, wei: bigint) =>
  evmLegOnce(orderId, "payout", ledger, (record, guard) => ledger.nativeTransfer(to, wei, record, guard))

/** Blocks one look reads at most (each block is read whole on a real node). */
const SCAN_BLOCKS_MAX = 500n

/**
 * The first native payment to the order's address after `fromBlock`, with its confirmations. A look
 * reads at most SCAN_BLOCKS_MAX blocks (and the ledger may read fewer: it says where it stopped);
 * one that stopped short of the head says it is incomplete, so "nothing paid" is never taken from a
 * look that did not read to the tip (an expiry would otherwise miss a deposit further up).
 */
export const sightEthDeposit = (
  ledger: Pick<EvmLedger, "blockNumber" | "nativeTransfers">,
  address: string,
  fromBlock: number,
  cursor: EvmDepositCursor
): Effect.Effect<DepositLook<bigint>, EvmInvalidInput | EvmRpcError> =>
  Effect.gen(function*() {
    const head = yield* ledger.blockNumber
    const from = cursor.clearedTo === undefined ? BigInt(fromBlock + 1) : cursor.clearedTo + 1n
    if (head < from) return { complete: true, found: undefined }
    const last = head < from + SCAN_BLOCKS_MAX - 1n ? head : from + SCAN_BLOCKS_MAX - 1n
    const { nextBlock, transfers } = yield* ledger.nativeTransfers(from, last, [address])
    const first = transfers[0]
    if (first !== undefined) return sighted(head, first)
    const readTo = nextBlock - 1n
    clearFinal(cursor, from, readTo, head)
    return { complete: readTo >= head, found: undefined }
  })
