// Gap-limit discovery (BIP-44): walk each branch until `gapLimit` consecutive addresses have
// never been used. The ledger is a port function so this runs against the devnet, a real node
// (scantxoutset / an indexer) or a stub in tests. Windows are batched: one lookup asks for
// exactly the addresses that could still extend the branch.
import { Data, Either } from "effect"
import { CHANGE, deriveAddresses, RECEIVE, type Branch, type DerivedAddress, type KeyError, type WatchOnlyAccount } from "./keys.ts"

export interface AddressActivity {
  /** Ever received anything (a spent-to-zero address still counts as used). */
  readonly used: boolean
  readonly balance: bigint
}

/** One batched question to the ledger; it must answer for every address it was asked about. */
export type AddressLookup = (addresses: ReadonlyArray<string>) => Promise<ReadonlyMap<string, AddressActivity>>

/** Spec: "address derivation gap limit: 20, both branches". */
export const GAP_LIMIT = 20
/** Stop a branch after this many addresses even if activity continues (bounded work per scan). */
export const SCAN_ADDRESSES_PER_BRANCH_MAX = 10_000

export interface ScannedAddress extends DerivedAddress, AddressActivity {}

export interface BranchScan {
  readonly branch: Branch
  /** Every address looked at, in index order: up to the last used one plus the gap. */
  readonly addresses: ReadonlyArray<ScannedAddress>
  readonly used: ReadonlyArray<ScannedAddress>
  /** Lowest index after the last used one: the next fresh address to hand out. */
  readonly nextIndex: number
  readonly balance: bigint
  /** True when SCAN_ADDRESSES_PER_BRANCH_MAX stopped the walk before a full gap was seen. */
  readonly truncated: boolean
}

export interface AccountScan {
  readonly receive: BranchScan
  readonly change: BranchScan
  readonly balance: bigint
}

export interface ScanOptions {
  readonly gapLimit?: number
  readonly maxAddressesPerBranch?: number
}

/** The scan could not finish: bad options or a ledger lookup that failed or fell short. */
export class ScanError extends Data.TaggedError("ScanError")<{ readonly message: string }> {}

type Scanned<A> = Either.Either<A, ScanError | KeyError>
const scanError = (message: string) => Either.left(new ScanError({ message }))

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

export const scanBranch = async (
  watch: WatchOnlyAccount,
  branch: Branch,
  lookup: AddressLookup,
  options: ScanOptions = {}
): Promise<Scanned<BranchScan>> => {
  const gap = options.gapLimit ?? GAP_LIMIT
  const max = options.maxAddressesPerBranch ?? SCAN_ADDRESSES_PER_BRANCH_MAX
  if (!Number.isInteger(gap) || gap < 1) return scanError(`gap limit must be a positive integer, got ${gap}`)
  const seen: Array<ScannedAddress> = []
  let lastUsed = -1
  // Invariant: every index below seen.length is scanned; the walk ends once indexes
  // lastUsed+1 .. lastUsed+gap are all scanned and unused.
  while (seen.length < lastUsed + 1 + gap && seen.length < max) {
    const from = seen.length
    const count = Math.min(lastUsed + 1 + gap, max) - from
    const window = deriveAddresses(watch, branch, from, count)
    if (Either.isLeft(window)) return Either.left(window.left)
    let answers: ReadonlyMap<string, AddressActivity>
    try {
      answers = await lookup(window.right.map((d) => d.address))
    } catch (e) {
      return scanError(`ledger lookup failed: ${message(e)}`)
    }
    for (const d of window.right) {
      const activity = answers.get(d.address)
      // A missing answer must not read as "unused": that would hide funds behind the gap.
      if (activity === undefined) return scanError(`ledger lookup gave no answer for ${d.address}`)
      seen.push({ ...d, used: activity.used, balance: activity.balance })
      if (activity.used) lastUsed = d.index
    }
  }
  const used = seen.filter((a) => a.used)
  return Either.right({
    branch,
    addresses: seen,
    used,
    nextIndex: lastUsed + 1,
    balance: seen.reduce((sum, a) => sum + a.balance, 0n),
    truncated: seen.length < lastUsed + 1 + gap
  })
}

/** Scans the receive (0) and change (1) branches of a watch-only account. */
export const scanAccount = async (
  watch: WatchOnlyAccount,
  lookup: AddressLookup,
  options: ScanOptions = {}
): Promise<Scanned<AccountScan>> => {
  const receive = await scanBranch(watch, RECEIVE, lookup, options)
  if (Either.isLeft(receive)) return Either.left(receive.left)
  const change = await scanBranch(watch, CHANGE, lookup, options)
  if (Either.isLeft(change)) return Either.left(change.left)
  return Either.right({ receive: receive.right, change: change.right, balance: receive.right.balance + change.right.balance })
}
