// Straight to the signer (issue 22, point 3): the Authorization entities this node runs right
// now, so a market batch's SignLegs for one of them runs without a cluster round trip, as an
// order reaches a local Market (market/LocalMarkets.ts). An entity registers while it is active
// here and leaves when its scope closes; a grant whose entity is not here (another node's, or
// idle) is asked through the cluster as before.
//
// Safe for the same reason a second activation during a shard move is: the call still runs under
// the entity's key lock, and the statement that stores a leg's bytes takes the row only while it
// is unsigned and the grant's key is stored, so two signers never both store, let alone send.
import { Context, type Effect, Layer } from "effect"
import type { LegsRefused, SignedLeg, SignLegs } from "../../../schemas/exchange/authorization.ts"

export interface LocalSigner {
  readonly signLegs: (payload: SignLegs) => Effect.Effect<ReadonlyArray<SignedLeg>, LegsRefused>
}

/** By entity id (`userId/asset`): the Authorization entities active on this node. */
export class LocalAuthorizations extends Context.Tag("shardline/exchange/LocalAuthorizations")<LocalAuthorizations, Map<string, LocalSigner>>() {}

/** SignLegs calls made by this process's markets, by path (tests read it; a counter, never a decision). */
export const signerPathCounts = { local: 0, cluster: 0 }

export const layer = Layer.sync(LocalAuthorizations, () => new Map<string, LocalSigner>())
