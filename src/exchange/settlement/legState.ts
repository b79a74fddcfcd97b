// What a settlement leg's row should say after one look at the ledger, and when its Settlement
// entity should look again. Pure: the entity reads the ledger and the Omni view, these decide.

export type LegStatus = "recorded" | "signed" | "broadcast" | "confirmed" | "final" | "failed"

/** What the ledger and the Omni indexer said about a leg's transaction. */
export type Sighting =
  | { readonly _tag: "Unknown" } // the ledger did not answer
  | { readonly _tag: "NotFound" } // dropped, or never reached the ledger: send the stored bytes again
  | { readonly _tag: "InMempool" }
  | {
    readonly _tag: "InBlock"
    readonly confirmations: number
    readonly blockHeight: number
    readonly blockHash: string
    /** The Omni indexer's judgement; undefined while it has not applied that block. */
    readonly omni: { readonly valid: true } | { readonly valid: false; readonly reason: string } | undefined
  }

export interface LegUpdate {
  readonly status: LegStatus
  readonly confirmations: number
  readonly blockHeight: number | null
  readonly blockHash: string | null
  readonly failure: string | null
  /** Send the stored bytes again. */
  readonly rebroadcast: boolean
}

export const isSettled = (status: LegStatus): boolean => status === "final" || status === "failed"

/** The row after a sighting; undefined: nothing to write (the ledger did not answer). */
export const afterSighting = (sighting: Sighting, finalDepth: number): LegUpdate | undefined => {
  switch (sighting._tag) {
    case "Unknown":
      return undefined
    case "NotFound":
      return { status: "broadcast", confirmations: 0, blockHeight: null, blockHash: null, failure: null, rebroadcast: true }
    case "InMempool":
      return { status: "broadcast", confirmations: 0, blockHeight: null, blockHash: null, failure: null, rebroadcast: false }
    case "InBlock": {
      const at = { confirmations: sighting.confirmations, blockHeight: sighting.blockHeight, blockHash: sighting.blockHash, rebroadcast: false }
      if (sighting.omni !== undefined && !sighting.omni.valid) {
        return { ...at, status: "failed", failure: `the Omni indexer judged the send invalid: ${sighting.omni.reason}` }
      }
      // Final only once the indexer has judged it valid: confirmations alone do not move tokens.
      const final = sighting.confirmations >= finalDepth && sighting.omni !== undefined
      return { ...at, status: final ? "final" : "confirmed", failure: null }
    }
  }
}

/** The legs as the next check will find them: their status and confirmations. */
export interface LegProgress {
  readonly status: LegStatus
  readonly confirmations: number
}

/** Extra wait after the expected block, for the Omni view and the storage poll to catch up. */
export const checkSlackMs = 250

/**
 * When to look again, ms from now; undefined once every leg is settled. A leg not yet in a block
 * is looked at after about one block; a confirmed one when it should reach the final depth, so a
 * trade costs about three persisted messages (Follow, first confirmation, final) when all goes well.
 */
export const nextCheckInMs = (legs: ReadonlyArray<LegProgress>, finalDepth: number, blockMs: number): number | undefined => {
  const open = legs.filter((l) => !isSettled(l.status))
  if (open.length === 0) return undefined
  const blocks = Math.min(...open.map((l) => (l.confirmations >= 1 ? Math.max(1, finalDepth - l.confirmations) : 1)))
  return blocks * blockMs + checkSlackMs
}
