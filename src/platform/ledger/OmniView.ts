// This node's view of Omni balances on the token ledger: our own indexer (src/chain/omni)
// following the ledger in the background, shared by everything on the node that needs a
// confirmed Omni balance (the Market's funded check, the Authorization's sweep, the devnet CLI).
import { Context, Data, type Effect } from "effect"
import type { OmniProperty, OmniTxRecord } from "../../chain/omni/indexer.ts"

/** The view could not reach the ledger's tip (the ledger did not answer, or a block was refused). */
export class OmniViewBehind extends Data.TaggedError("OmniViewBehind")<{ readonly message: string }> {}

export interface OmniViewShape {
  /** Confirmed balance (base units) of `address` in `property`, as of `height`. */
  readonly balance: (address: string, property: number) => Effect.Effect<bigint>
  /** A property as of the view's height (issuer, total tokens in base units), if it exists. */
  readonly property: (id: number) => Effect.Effect<OmniProperty | undefined>
  /** The last block the view has applied. */
  readonly height: Effect.Effect<number>
  /** Catches up with the ledger's tip now (one sync at a time); the height reached (best effort: a failed round is logged). */
  readonly sync: Effect.Effect<number>
  /**
   * Read your own writes: succeeds only once the view has applied every block the ledger had
   * when it was called (the height reached), else fails. A tool that reports a payment, and the
   * Market before it refuses an order for funds, wait on this, not on the background follower.
   */
  readonly current: Effect.Effect<number, OmniViewBehind>
  /** How the indexer judged a confirmed transaction (valid or not, and why), if it has seen it. */
  readonly tx: (txid: string) => Effect.Effect<OmniTxRecord | undefined>
}

export class OmniView extends Context.Tag("shardline/OmniView")<OmniView, OmniViewShape>() {}
