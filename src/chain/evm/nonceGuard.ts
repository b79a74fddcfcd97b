// What a recorded EVM send needs from its caller to be safe across processes: the per-ledger
// send lock only serialises one process, so two nodes paying from the same address could read
// the same pending nonce. A guard (the desk's is a Postgres advisory lock, desk/orders/nonceLock.ts)
// runs "choose the nonce, sign, record" as one step for (chain, sender) everywhere, and chooses
// the nonce from what the node says AND what is already recorded but maybe not yet sent.
import type { Effect } from "effect"
import type { Address, Hex } from "viem"

export interface NonceGuard<E> {
  /** Runs `self` (nonce choice, signing, record) as the only such step for `sender` on this chain. */
  readonly serialize: <A, E2>(sender: Address, self: Effect.Effect<A, E2>) => Effect.Effect<A, E | E2>
  /** The nonce to sign with, given the node's pending nonce for `sender`; called inside `serialize`. */
  readonly nonce: (sender: Address, pending: number) => Effect.Effect<number, E>
}

/** A send `sendRecorded` makes: from the hot wallet, or from a key the caller holds. */
export interface RecordedSendRequest {
  readonly to: string
  /** Wei of the native coin sent along (a gas top-up); default 0. */
  readonly value?: bigint
  /** Calldata; default empty (a plain native transfer). */
  readonly data?: Hex
  /** 32-byte private key of the sender; absent: the hot wallet. Never logged. */
  readonly signerKey?: Uint8Array
  /**
   * At most this many wei for gas (gas limit × max fee): the max fee per gas is lowered to fit.
   * For a sender holding only a top-up (a deposit address returning a token).
   */
  readonly feeBudgetWei?: bigint
}
