// The in-process devnet behind the UtxoLedger port: the embedded default (`npm start`) and the
// fast, deterministic ledger of unit tests. The chain itself (blocks, UTXO set, mempool policy,
// signature checks) is `internal/devnetChain.ts`; this module adds what a real network does to a
// node from outside: blocks on a clock, and injected faults (a broadcast delayed or lost, a reorg
// of depth N). Faults are reachable only through the `UtxoDevnet` tag, never through UtxoLedger.
import { Context, Effect, Layer } from "effect"
import { addressScript } from "../txBuilder.ts"
import { broadcastSpan } from "../broadcastSpan.ts"
import { ledgerParams, type UtxoChainParams } from "../params.ts"
import { DevnetChain, type ReorgOutcome } from "./internal/devnetChain.ts"
import { ownerScript, parseTx } from "./internal/scripts.ts"
import {
  checkHeight,
  checkMine,
  checkPage,
  checkTxid,
  LedgerBlockNotFound,
  LedgerInvalidInput,
  ledgerLimits,
  LedgerTxNotFound,
  LedgerTxRejected,
  UtxoLedger,
  type Owner,
  type UtxoLedgerShape
} from "./UtxoLedger.ts"

export type { ReorgOutcome } from "./internal/devnetChain.ts"

export interface DevnetOptions {
  /** Defaults to the token ledger's params (0x42/0x32, dust 5460, 1 sat/vB, 80 B, maturity 100). */
  readonly params?: UtxoChainParams
  /** Coinbase subsidy, satoshis; default 50 coins as on litecoind regtest. */
  readonly subsidySats?: bigint
  /** Blocks between halvings; default 150 as on litecoind regtest; 0 never halves. */
  readonly halvingInterval?: number
  /** Header time of block 0, seconds; block h has genesisTime + h × blockSpacingSeconds. */
  readonly genesisTime?: number
  readonly blockSpacingSeconds?: number
  readonly mempoolTxMax?: number
  readonly blockTxMax?: number
  /** Mine one block every this many milliseconds from the start (the clock); off when absent. */
  readonly blockIntervalMs?: number
  /** Ledger address paid by clock-mined blocks; by default their coinbase is burnt (OP_RETURN). */
  readonly clockMineTo?: string
}

export const devnetDefaults = {
  subsidySats: 5_000_000_000n,
  halvingInterval: 150,
  genesisTime: 1_700_000_000,
  blockSpacingSeconds: 150,
  mempoolTxMax: 10_000,
  blockTxMax: 5_000,
  /** Faults queued at once, and delayed broadcasts in flight at once. */
  faultsQueuedMax: 1_000,
  delayedInFlightMax: 1_000,
  /** Delivery records kept for inspection (oldest dropped first). */
  deliveryLogMax: 1_000,
  /** A clock faster than this would starve the event loop. */
  blockIntervalMsMin: 10,
  delayMsMax: 600_000
} as const

export interface ReorgRequest {
  /** Blocks to take off the tip (1..height). */
  readonly depth: number
  /**
   * New blocks mined in their place; default `depth + 1`. A node only switches to a branch with
   * more work, so a real reorg leaves a longer chain; fewer or equal is allowed for follower tests.
   */
  readonly blocks?: number
  /** What happens to the orphaned blocks' transactions; default back to the mempool. */
  readonly orphanedTxs?: "mempool" | "drop"
  /** Mine the mempool into the replacement blocks; default false (they stay in the mempool). */
  readonly includeMempool?: boolean
  /** Ledger address paid by the replacement coinbases; burnt by default. */
  readonly toAddress?: string
}

/** What happened to a delayed broadcast when it reached the mempool. */
export interface Delivery {
  readonly txid: string
  readonly fault: "delay" | "drop"
  readonly outcome: "accepted" | "rejected" | "dropped"
  readonly reason?: string
}

export interface DevnetFaults {
  /** The next `count` broadcasts answer with their txid at once but reach the mempool `ms` later. */
  readonly delayBroadcasts: (count: number, ms: number) => Effect.Effect<void, LedgerInvalidInput>
  /** The next `count` broadcasts answer with their txid and are lost (never reach the mempool). */
  readonly dropBroadcasts: (count: number) => Effect.Effect<void, LedgerInvalidInput>
  readonly clearFaults: Effect.Effect<void>
  /** Replaces the top blocks (see ReorgRequest); indexers following the chain must roll back. */
  readonly reorg: (request: ReorgRequest) => Effect.Effect<ReorgOutcome, LedgerInvalidInput>
  /**
   * Mines one block of exactly these mempool transactions in this order (bitcoind's
   * `generateblock` with a list): an adversarial miner. Refused when one is not in the mempool or
   * spends what is neither unspent nor made earlier in the block. The block's hash.
   */
  readonly mineBlock: (txids: ReadonlyArray<string>, toAddress?: string) => Effect.Effect<string, LedgerInvalidInput>
  /** Delayed and dropped broadcasts so far, newest last. */
  readonly deliveries: Effect.Effect<ReadonlyArray<Delivery>>
}

export interface UtxoDevnetShape {
  readonly ledger: UtxoLedgerShape
  readonly faults: DevnetFaults
  readonly mempool: Effect.Effect<ReadonlyArray<string>>
  /** Starts (or restarts) mining one block every `intervalMs`; coinbase to `toAddress` or burnt. */
  readonly startClock: (intervalMs: number, toAddress?: string) => Effect.Effect<void, LedgerInvalidInput>
  readonly stopClock: Effect.Effect<void>
}

export class UtxoDevnet extends Context.Tag("shardline/UtxoDevnet")<UtxoDevnet, UtxoDevnetShape>() {}

export interface UtxoDevnetHandle extends UtxoDevnetShape {
  /** Stops the clock and cancels delayed broadcasts. */
  readonly close: () => void
}

type Fault = { readonly kind: "delay"; readonly ms: number } | { readonly kind: "drop" }

const BURN_SCRIPT = Uint8Array.of(0x6a, 0x04, 0x62, 0x75, 0x72, 0x6e) // OP_RETURN "burn"

const invalid = (field: string, message: string) => new LedgerInvalidInput({ field, message })

const positiveInt = (field: string, n: number, max: number): Effect.Effect<number, LedgerInvalidInput> =>
  Number.isInteger(n) && n >= 1 && n <= max ? Effect.succeed(n) : Effect.fail(invalid(field, `must be an integer in 1..${max}, got ${n}`))

/** Builds a devnet outside any Effect scope (bench, scripts); call `close` when done. */
export const makeUtxoDevnet = (options: DevnetOptions = {}): UtxoDevnetHandle => {
  const params = options.params ?? ledgerParams
  const chain = new DevnetChain({
    params,
    subsidySats: options.subsidySats ?? devnetDefaults.subsidySats,
    halvingInterval: options.halvingInterval ?? devnetDefaults.halvingInterval,
    genesisTime: options.genesisTime ?? devnetDefaults.genesisTime,
    blockSpacingSeconds: options.blockSpacingSeconds ?? devnetDefaults.blockSpacingSeconds,
    mempoolTxMax: options.mempoolTxMax ?? devnetDefaults.mempoolTxMax,
    blockTxMax: options.blockTxMax ?? devnetDefaults.blockTxMax
  })

  const faults: Array<Fault> = []
  const inFlight = new Set<ReturnType<typeof setTimeout>>()
  const deliveries: Array<Delivery> = []
  let clock: ReturnType<typeof setInterval> | undefined

  const record = (d: Delivery): void => {
    deliveries.push(d)
    if (deliveries.length > devnetDefaults.deliveryLogMax) deliveries.shift()
  }

  const scriptOf = (field: string, address: string | undefined): Effect.Effect<Uint8Array, LedgerInvalidInput> => {
    if (address === undefined) return Effect.succeed(BURN_SCRIPT)
    return Effect.mapError(addressScript(address, params), (e) => invalid(field, e.message))
  }

  const parsed = (hex: string) => Effect.mapError(parseTx(hex), (e) => invalid("hex", e.message))

  const broadcast = (hex: string) =>
    Effect.flatMap(parsed(hex), (tx) =>
      Effect.suspend(() => {
        // Already waiting in the mempool: a repeat is harmless and uses up no fault.
        if (chain.tx(tx.getId())?.confirmations === 0) return Effect.succeed(tx.getId())
        const fault = faults.shift()
        const outcome = chain.accept(hex, fault !== undefined)
        if (!outcome.ok) return Effect.fail(new LedgerTxRejected({ txid: outcome.txid, code: outcome.code, reason: outcome.reason }))
        if (fault?.kind === "drop") record({ txid: outcome.txid, fault: "drop", outcome: "dropped" })
        if (fault?.kind === "delay") {
          const timer = setTimeout(() => {
            inFlight.delete(timer)
            const late = chain.accept(hex, false)
            record(late.ok ? { txid: late.txid, fault: "delay", outcome: "accepted" } : { txid: late.txid, fault: "delay", outcome: "rejected", reason: late.reason })
          }, fault.ms)
          inFlight.add(timer)
        }
        return Effect.succeed(outcome.txid)
      })
    ).pipe(broadcastSpan(params.name))
  const ledger: UtxoLedgerShape = {
    params,
    tip: Effect.sync(() => chain.tip()),
    listUnspent: (owners: ReadonlyArray<Owner>) =>
      Effect.gen(function* () {
        if (owners.length > ledgerLimits.listUnspentOwnersMax) return yield* Effect.fail(invalid("owners", `at most ${ledgerLimits.listUnspentOwnersMax} per call`))
        const scripts: Array<Uint8Array> = []
        for (const [i, o] of owners.entries()) {
          scripts.push(yield* Effect.mapError(ownerScript(o, params), (e) => invalid(`owners[${i}]`, e.message)))
        }
        const utxos = chain.utxos(scripts)
        if (utxos.length > ledgerLimits.listUnspentResultsMax) {
          return yield* Effect.fail(invalid("owners", `more than ${ledgerLimits.listUnspentResultsMax} unspent outputs; ask for fewer owners`))
        }
        return utxos
      }),
    getTx: (txid) =>
      Effect.flatMap(checkTxid(txid), (id) => {
        const tx = chain.tx(id)
        return tx === undefined ? Effect.fail(new LedgerTxNotFound({ txid: id })) : Effect.succeed(tx)
      }),
    testAccept: (hex) => Effect.flatMap(parsed(hex), () => Effect.sync(() => chain.testAccept(hex))),
    broadcast,
    broadcastMany: (hexes) => Effect.forEach(hexes, (hex) => Effect.either(broadcast(hex))),
    blocks: (fromHeight, limit) => Effect.map(checkPage(fromHeight, limit), (max) => chain.blocks(fromHeight, max)),
    blockAt: (height) =>
      Effect.flatMap(checkHeight(height), (h) => {
        const [block] = chain.blocks(h, 1).blocks
        return block === undefined ? Effect.fail(new LedgerBlockNotFound({ height: h })) : Effect.succeed(block)
      }),
    mine: (n, toAddress) =>
      Effect.gen(function* () {
        const count = yield* checkMine(n)
        const script = yield* scriptOf("toAddress", toAddress)
        return chain.mine(count, script)
      })
  }

  const queue = (fault: Fault, count: number) =>
    Effect.flatMap(positiveInt("count", count, devnetDefaults.faultsQueuedMax), (c) =>
      faults.length + c > devnetDefaults.faultsQueuedMax || inFlight.size + c > devnetDefaults.delayedInFlightMax
        ? Effect.fail(invalid("count", `at most ${devnetDefaults.faultsQueuedMax} faults queued`))
        : Effect.sync(() => { for (let i = 0; i < c; i++) faults.push(fault) })
    )

  const faultsApi: DevnetFaults = {
    delayBroadcasts: (count, ms) => Effect.flatMap(positiveInt("ms", ms, devnetDefaults.delayMsMax), (m) => queue({ kind: "delay", ms: m }, count)),
    dropBroadcasts: (count) => queue({ kind: "drop" }, count),
    clearFaults: Effect.sync(() => { faults.length = 0 }),
    reorg: (request) =>
      Effect.gen(function* () {
        const depth = yield* positiveInt("depth", request.depth, chain.height)
        const blocks = request.blocks ?? depth + 1
        if (!Number.isInteger(blocks) || blocks < 0 || blocks > ledgerLimits.mineBlocksMax) return yield* Effect.fail(invalid("blocks", `must be an integer in 0..${ledgerLimits.mineBlocksMax}`))
        const script = yield* scriptOf("toAddress", request.toAddress)
        return chain.reorg(depth, blocks, request.orphanedTxs ?? "mempool", request.includeMempool ?? false, script)
      }),
    mineBlock: (txids, toAddress) =>
      Effect.gen(function* () {
        if (txids.length > chain.options.blockTxMax) return yield* Effect.fail(invalid("txids", `at most ${chain.options.blockTxMax} per block`))
        const script = yield* scriptOf("toAddress", toAddress)
        const mined = chain.mineExact(txids, script)
        return mined.ok ? mined.hash : yield* Effect.fail(invalid("txids", mined.reason))
      }),
    deliveries: Effect.sync(() => [...deliveries])
  }

  const stopClock = Effect.sync(() => {
    if (clock !== undefined) clearInterval(clock)
    clock = undefined
  })

  const startClock = (intervalMs: number, toAddress?: string) =>
    Effect.gen(function* () {
      if (!Number.isInteger(intervalMs) || intervalMs < devnetDefaults.blockIntervalMsMin) {
        return yield* Effect.fail(invalid("intervalMs", `must be an integer ≥ ${devnetDefaults.blockIntervalMsMin}`))
      }
      const script = yield* scriptOf("toAddress", toAddress)
      yield* stopClock
      clock = setInterval(() => chain.mine(1, script), intervalMs)
      // The clock alone must not keep a process alive (a server or a test does).
      clock.unref()
    })

  const handle: UtxoDevnetHandle = {
    ledger,
    faults: faultsApi,
    mempool: Effect.sync(() => chain.mempoolTxids()),
    startClock,
    stopClock,
    close: () => {
      Effect.runSync(stopClock)
      for (const t of inFlight) clearTimeout(t)
      inFlight.clear()
    }
  }
  if (options.blockIntervalMs !== undefined) Effect.runSync(startClock(options.blockIntervalMs, options.clockMineTo))
  return handle
}

/**
 * The devnet as a scoped layer: UtxoLedger for the app, UtxoDevnet for tests and ops. The clock
 * (`blockIntervalMs`) starts with the scope and stops, with any delayed broadcast, when it closes.
 */
export const layerDevnet = (
  params: UtxoChainParams = ledgerParams,
  options: Omit<DevnetOptions, "params"> = {}
): Layer.Layer<UtxoLedger | UtxoDevnet> =>
  Layer.scopedContext(
    Effect.map(
      Effect.acquireRelease(Effect.sync(() => makeUtxoDevnet({ ...options, params })), (h) => Effect.sync(() => h.close())),
      (h) => Context.make(UtxoLedger, h.ledger).pipe(Context.add(UtxoDevnet, h))
    )
  )
