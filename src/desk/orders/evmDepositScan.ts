// A mint's stablecoin deposit on its EVM chain: the first transfer of the token to the order's
// deposit address at or above its scan start, with its confirmations.
//
// Why a cursor and pages: one `transfers` call reads at most the ledger's `scanBlocksMax` blocks
// (2,000 by default, a provider's eth_getLogs limit). A look that read `start..head` in one call
// never saw a deposit more than 2,000 blocks above the start: on base (2 s blocks) an order older
// than about 67 minutes, so a late deposit to an expired mint was never refunded. A look now reads
// page after page (PAGES_PER_LOOK over final blocks at most, then it says it is incomplete), and remembers the blocks
// that are final (FINAL_DEPTH under the head) and paid nothing, so the next look starts above them.
import { Effect } from "effect"
import type { EvmInvalidInput, EvmLedger, EvmRpcError } from "../../chain/evm/EvmLedger.ts"
import type { DepositLook } from "./depositScan.ts"

/** Pages one look reads at most (each one eth_getLogs of up to `scanBlocksMax` blocks). */
export const PAGES_PER_LOOK = 5
/** Blocks this deep under the head are taken as final: read once, never again (EVM reorgs are far shallower). */
export const FINAL_DEPTH = 64n

/** What one activation has cleared: blocks up to `clearedTo` are final and paid nothing (a mint's look and an ETH wrap's, ethWrap.ts). */
export interface EvmDepositCursor {
  clearedTo: bigint | undefined
}

/** After reading `from..readTo` and finding nothing: the final part of it is cleared (never moves back). */
export const clearFinal = (cursor: EvmDepositCursor, from: bigint, readTo: bigint, head: bigint): void => {
  const final = head - FINAL_DEPTH
  const cleared = readTo < final ? readTo : final
  if (cleared >= from && (cursor.clearedTo === undefined || cleared > cursor.clearedTo)) cursor.clearedTo = cleared
}

/** A transfer to the deposit address seen with the chain at `head`: the look's answer. */
export const sighted = (head: bigint, t: { readonly txHash: string; readonly value: bigint; readonly blockNumber: bigint }): DepositLook<bigint> =>
  ({ complete: true, found: { txid: t.txHash, amount: t.value, confirmations: Number(head - t.blockNumber) + 1 } })

export const sightTokenDeposit = (
  ledger: Pick<EvmLedger, "blockNumber" | "transfers">,
  token: string,
  address: string,
  startBlock: bigint,
  cursor: EvmDepositCursor
): Effect.Effect<DepositLook<bigint>, EvmInvalidInput | EvmRpcError> =>
  Effect.gen(function*() {
    const head = yield* ledger.blockNumber
    let from = cursor.clearedTo === undefined || cursor.clearedTo < startBlock ? startBlock : cursor.clearedTo + 1n
    if (head < from) return { complete: true, found: undefined }
    // The pages over final blocks are bounded; the last FINAL_DEPTH blocks are always read (they
    // cannot be cleared, so a look that stopped short of them would never complete).
    for (let page = 0; page < PAGES_PER_LOOK || from > head - FINAL_DEPTH; page++) {
      const scan = yield* ledger.transfers(token, from, head, { to: [address] })
      const first = scan.logs[0]
      if (first !== undefined) return sighted(head, first)
      clearFinal(cursor, from, scan.toBlock, head)
      if (scan.toBlock >= head) return { complete: true, found: undefined }
      from = scan.nextBlock
    }
    return { complete: false, found: undefined }
  })
