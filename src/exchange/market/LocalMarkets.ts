// Straight to the owner (issue 22, point 2): the Market entities this node runs right now, so an
// order for one of them goes into its queue without a cluster round trip (a local cluster message
// cost 84 µs of CPU against 11 µs for the same call in-process). A Market registers itself while
// it is active here and leaves when its scope closes (shard moved, node draining); a caller whose
// market left mid-call gets MarketGone and sends the same command through the cluster, where the
// market's new owner answers it. That is safe because a place carries its client order id (a
// second delivery answers as a retry) and the answer is only ever given after the commit.
import { Context, Data, type Effect, Layer } from "effect"
import type { BatchAnswer, BatchCommand } from "../../../schemas/exchange/market.ts"

/** The market stopped here before answering: ask its owner through the cluster. */
export class MarketGone extends Data.TaggedError("MarketGone")<{}> {}

/** A command into the market's queue, answered as a Batch's commands are (a refusal is an answer). */
export interface MarketInbox {
  readonly send: (c: BatchCommand) => Effect.Effect<BatchAnswer, MarketGone>
}

/** By symbol: the markets active on this node. */
export class LocalMarkets extends Context.Tag("shardline/exchange/LocalMarkets")<LocalMarkets, Map<string, MarketInbox>>() {}

export const layer = Layer.sync(LocalMarkets, () => new Map<string, MarketInbox>())
