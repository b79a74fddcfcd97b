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

/** What a leg's row says now, as far as a look's update could change it. */
export interface LegWritten {
  readonly status: LegStatus
  readonly confirmations: number
  readonly blockHeight: number | null
  readonly blockHash: string | null
}

/**
 * Whether a look's update must be written (`sent`: how many times its bytes went out again). A leg
 * that stays `confirmed` in the same block is not rewritten for its count alone: that was most of
 * the table's updates (every confirmed leg, every block, each touching all its indexes), and the
 * count follows from the block height it keeps and the tip its market records, which is how it is
 * read (`shownConfirmations`). The count is written with every other change, so a leg's row has
 * the count of its last change: its first block, and its final depth.
 */
export const needsWrite = (row: LegWritten, update: LegUpdate, sent: number): boolean => {
  if (sent > 0 || update.failure !== null) return true
  if (update.status !== row.status || update.blockHeight !== row.blockHeight || update.blockHash !== row.blockHash) return true
  return update.status !== "confirmed" && update.confirmations !== row.confirmations
}

/**
 * A leg's confirmations as readers see them. A confirmed leg's row keeps the count of its first
 * block (`needsWrite`): it is counted from `tipHeight`, the ledger tip its market's sweep last saw
 * (null: none recorded), never below what the row says. A final leg shows the depth at which it
 * was judged final: the sweep no longer follows it, so a count past that would claim blocks on
 * top that nobody checked are still there; it is at least the final depth, and at least what it
 * showed while confirmed (both counted from tips its market's sweeps saw, one after the other).
 * Any other status has no block: its row's count (0).
 */
export const shownConfirmations = (leg: { readonly status: string; readonly confirmations: number; readonly blockHeight: number | null }, tipHeight: number | null): number =>
  leg.status === "confirmed" && leg.blockHeight !== null && tipHeight !== null
    ? Math.max(leg.confirmations, tipHeight - leg.blockHeight + 1)
    : leg.confirmations

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

// --- Following a market's legs once per block (issue 22, point 3) ---

/** An unsettled leg as the market's sweep reads it. */
export interface OpenLeg {
  readonly tradeId: string
  readonly leg: "base" | "quote"
  readonly grantId: string
  readonly status: LegStatus
  /**
   * Its stored bytes, read only while it has no block (they find it in a new block's
   * transactions); null once it has one, or before it is signed (then `txid` is null too: both are
   * stored in one statement). A leg in a block that has to be sent again has its bytes read then.
   */
  readonly txHex: string | null
  readonly txid: string | null
  readonly confirmations: number
  readonly blockHeight: number | null
  readonly blockHash: string | null
  /** How long ago its row last changed, ms. */
  readonly ageMs: number
}

/** What the sweep learned from the ledger's blocks, without asking about any one transaction. */
export interface BlockFacts {
  readonly tipHeight: number
  /** Block hash at each height the legs sit at (as the ledger has it now). */
  readonly hashAt: ReadonlyMap<number, string>
  /**
   * Transactions of the blocks read since the last sweep, by their bytes (hex, as the ledger's
   * blocks list them): where each was mined. Keyed by bytes, not txid, so no transaction of a block
   * is parsed or hashed: a leg is a legacy (non-witness) transaction, whose txid is the hash of
   * exactly its bytes, so it is in a block if and only if its stored bytes are.
   */
  readonly minedIn: ReadonlyMap<string, { readonly height: number; readonly hash: string }>
}

/** The facts a page of the ledger's blocks gives (hashes by height, transactions by their bytes). */
export const factsOfBlocks = (
  tipHeight: number,
  blocks: ReadonlyArray<{ readonly height: number; readonly hash: string; readonly txs: ReadonlyArray<string> }>
): { readonly tipHeight: number; readonly hashAt: Map<number, string>; readonly minedIn: Map<string, { readonly height: number; readonly hash: string }> } => {
  const hashAt = new Map<number, string>()
  const minedIn = new Map<string, { readonly height: number; readonly hash: string }>()
  for (const b of blocks) {
    hashAt.set(b.height, b.hash)
    const at = { height: b.height, hash: b.hash }
    for (const hex of b.txs) minedIn.set(hex, at)
  }
  return { tipHeight, hashAt, minedIn }
}

/**
 * How the sweep treats one leg: `sign` (no bytes yet, and the inline signing had its chance),
 * `look` (ask the ledger about this one transaction: its block was reorged away, or it should have
 * been mined by now and was not, or it is stored but not known to be sent), `mined` (in a block:
 * its confirmations follow from the tip), or `wait` (sent recently, not mined yet: nothing to do).
 * `timing.staleMs`: how long a sent leg may stay out of every block before it is looked up (about
 * two blocks); `timing.signAfterMs`: how long an unsigned leg is left to the market's inline signing.
 */
export type SweepStep =
  | { readonly _tag: "sign" }
  | { readonly _tag: "look" }
  | { readonly _tag: "mined"; readonly confirmations: number; readonly blockHeight: number; readonly blockHash: string }
  | { readonly _tag: "wait" }

export interface SweepTiming {
  readonly staleMs: number
  readonly signAfterMs: number
}

/** A leg stored as signed this long ago without its broadcast recorded is looked up (its sender may have died). */
export const signedGraceMs = 2_000

export const sweepStep = (leg: OpenLeg, facts: BlockFacts, timing: SweepTiming): SweepStep => {
  if (leg.txid === null) return leg.ageMs >= timing.signAfterMs ? { _tag: "sign" } : { _tag: "wait" }
  const mined = (height: number, hash: string): SweepStep =>
    ({ _tag: "mined", confirmations: Math.max(0, facts.tipHeight - height + 1), blockHeight: height, blockHash: hash })
  if (leg.blockHeight !== null && leg.blockHash !== null) {
    const now = facts.hashAt.get(leg.blockHeight)
    if (now === leg.blockHash) return mined(leg.blockHeight, leg.blockHash)
    return { _tag: "look" } // its block is gone (or unknown): where is it now?
  }
  const found = leg.txHex === null ? undefined : facts.minedIn.get(leg.txHex)
  if (found !== undefined) return mined(found.height, found.hash)
  if (leg.status === "signed") return leg.ageMs >= signedGraceMs ? { _tag: "look" } : { _tag: "wait" } // its broadcast was never recorded
  return leg.ageMs >= timing.staleMs ? { _tag: "look" } : { _tag: "wait" }
}
