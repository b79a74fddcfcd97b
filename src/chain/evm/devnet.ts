// The in-process EVM devnet ledger: real ERC-20 bytecode executed by @ethereumjs/vm, raw
// transactions signed by viem, tx hash = keccak(signed bytes), blocks mined per transaction
// (like anvil), on demand, or on a clock. What `npm start` uses for ethereum, base and bsc;
// also the fast backend of the EvmLedger contract tests.
import { Duration, Effect, Either, Layer, Redacted, Schedule, type Scope } from "effect"
import type { Hash, Hex } from "viem"
import { evmChainNames, evmChains, type EvmChain } from "./chains.ts"
import { EvmLedgers, EvmTxRejected, ledgersOf, type EvmInvalidInput, type EvmLedger } from "./EvmLedger.ts"
import type { EvmBackend } from "./internal/backend.ts"
import { deployDevnetTokens } from "./devnetTokens.ts"
import { DevnetEngine, type EvmCallFailed } from "./internal/devnetEngine.ts"
import { parseAddress, hotWalletAccount } from "./internal/input.ts"
import { makeLedger, revertReason } from "./internal/ledger.ts"

export { devnetLimits } from "./internal/devnetEngine.ts"

export type DevnetMining =
  | { readonly mode: "auto" }
  | { readonly mode: "manual" }
  | { readonly mode: "interval"; readonly intervalMs: number }

export interface DevnetLedgerOptions {
  readonly chain: EvmChain
  readonly hotWalletKey: Redacted.Redacted<string>
  /** Default `auto`: every accepted transaction gets its own block at once, as anvil does. */
  readonly mining?: DevnetMining
  /** Native coin at genesis, wei. Default: the hot wallet gets `defaultHotWalletWei`. */
  readonly prefund?: ReadonlyArray<{ readonly address: string; readonly wei: bigint }>
  /** Seconds; fixed by default so block hashes are the same on every run. */
  readonly genesisTimestamp?: number
  readonly scanBlocksMax?: bigint
}

/** 10,000 native coins: gas for millions of devnet payouts. */
export const defaultHotWalletWei = 10_000n * 10n ** 18n
/** 2025-01-01T00:00:00Z. */
export const defaultGenesisTimestamp = 1_735_689_600
/** Shortest block clock; faster would starve everything else of the engine. */
export const miningIntervalMsMin = 10
/** Tip the devnet hot wallet offers, wei per gas; the devnet has no competition for space. */
const PRIORITY_FEE_WEI = 1_000_000n

/** A revert's decoded reason, or the EVM's own error when there is no revert payload. */
const failureReason = (e: EvmCallFailed): string => (e.revertData === "0x" ? e.message : revertReason(e.revertData))

const devnetBackend = (chain: EvmChain, engine: DevnetEngine, automine: boolean): EvmBackend => {
  const mine = (blocks: number) =>
    Effect.flatMap(Effect.promise(() => engine.mine(blocks)), (r) => (Either.isRight(r) ? Effect.void : Effect.dieMessage(r.left.message)))
  return {
    chainId: Effect.sync(() => engine.chainId),
    blockNumber: Effect.sync(() => engine.blockNumber()),
    nativeBalance: (address) => Effect.promise(() => engine.balance(address)),
    call: (request, block) =>
      Effect.map(Effect.promise(() => engine.call(request, block)), (o) =>
        Either.isRight(o) ? { ok: true, data: o.right.data } : { ok: false, reason: failureReason(o.left) }),
    prepare: (request) =>
      Effect.gen(function*() {
        const nonce = yield* Effect.promise(() => engine.nonce(request.from, "pending"))
        const estimate = yield* Effect.promise(() => engine.estimateGas(request))
        if (Either.isLeft(estimate)) return yield* new EvmTxRejected({ chain, reason: `execution reverted: ${failureReason(estimate.left)}` })
        const baseFee = engine.nextBaseFee()
        return { nonce: Number(nonce), gas: estimate.right, maxFeePerGas: baseFee * 2n + PRIORITY_FEE_WEI, maxPriorityFeePerGas: PRIORITY_FEE_WEI }
      }),
    sendRaw: (raw) =>
      Effect.gen(function*() {
        const result = yield* Effect.promise(() => engine.submit(raw))
        if (Either.isLeft(result)) return yield* new EvmTxRejected({ chain, reason: result.left.message })
        if (automine) yield* mine(1)
        return result.right as Hash
      }),
    txState: (hash) => Effect.sync(() => engine.txState(hash)),
    logs: (filter) => Effect.sync(() => engine.logs(filter)),
    nativeTransfers: (fromBlock, toBlock, to) => Effect.sync(() => engine.nativeTransfers(fromBlock, toBlock, to)),
    mine
  }
}

/** The devnet as a node, for what the hot wallet does not do: users' own transactions, a faucet. */
export interface DevnetNode {
  readonly chainId: number
  /** Any signed transaction (a user's deposit from their own wallet); mined at once in `auto` mode. */
  readonly sendRawTransaction: (raw: Hex) => Effect.Effect<Hash, EvmTxRejected>
  /** Sets the native balance of an address, wei. */
  readonly setBalance: (address: string, wei: bigint) => Effect.Effect<void, EvmInvalidInput>
  /** The nonce the address's next transaction must carry (counts the mempool). */
  readonly nextNonce: (address: string) => Effect.Effect<number, EvmInvalidInput>
  /** Base fee per gas of the next block, wei. */
  readonly nextBaseFee: Effect.Effect<bigint>
  readonly pendingCount: Effect.Effect<number>
}

/** One devnet chain: its ledger and its node handle. The block clock, if any, stops when the scope closes. */
export const makeDevnet = (options: DevnetLedgerOptions): Effect.Effect<{ readonly ledger: EvmLedger; readonly node: DevnetNode }, EvmInvalidInput, Scope.Scope> =>
  Effect.gen(function*() {
    const account = yield* hotWalletAccount(options.hotWalletKey)
    const prefund = yield* Effect.forEach(
      options.prefund ?? [{ address: account.address, wei: defaultHotWalletWei }],
      ({ address, wei }) => Effect.map(parseAddress("prefund.address", address), (a) => ({ address: a, wei }))
    )
    const params = evmChains[options.chain]
    const engine = yield* Effect.promise(() =>
      DevnetEngine.create({
        chainId: params.chainId,
        prefund,
        genesisTimestamp: options.genesisTimestamp ?? defaultGenesisTimestamp,
        blockTimeSeconds: params.blockTimeSeconds
      })
    )
    const mining = options.mining ?? { mode: "auto" }
    if (mining.mode === "interval") {
      const every = Duration.millis(Math.max(mining.intervalMs, miningIntervalMsMin))
      yield* Effect.forkScoped(Effect.repeat(Effect.zipRight(Effect.sleep(every), Effect.promise(() => engine.mine(1))), Schedule.forever))
    }
    const backend = devnetBackend(options.chain, engine, mining.mode === "auto")
    const ledger = yield* makeLedger({
      chain: options.chain,
      backend,
      account,
      ...(options.scanBlocksMax === undefined ? {} : { scanBlocksMax: options.scanBlocksMax })
    })
    const node: DevnetNode = {
      chainId: params.chainId,
      sendRawTransaction: (raw) => Effect.catchTag(backend.sendRaw(raw), "EvmRpcError", (e) => Effect.die(e)),
      setBalance: (address, wei) => Effect.flatMap(parseAddress("address", address), (a) => Effect.promise(() => engine.setBalance(a, wei))),
      nextNonce: (address) => Effect.flatMap(parseAddress("address", address), (a) => Effect.promise(async () => Number(await engine.nonce(a, "pending")))),
      nextBaseFee: Effect.sync(() => engine.nextBaseFee()),
      pendingCount: Effect.sync(() => engine.pendingCount())
    }
    return { ledger, node }
  })

export const makeDevnetLedger = (options: DevnetLedgerOptions): Effect.Effect<EvmLedger, EvmInvalidInput, Scope.Scope> =>
  Effect.map(makeDevnet(options), ({ ledger }) => ledger)

export interface DevnetLayerOptions {
  readonly hotWalletKey: Redacted.Redacted<string>
  /** Default: ethereum, base and bsc. */
  readonly chains?: ReadonlyArray<EvmChain>
  readonly mining?: DevnetMining
  readonly genesisTimestamp?: number
  /** Deploy USDC, USDT, PYUSD and DAI from the hot wallet at start (`devnetTokens.ts`); default false. */
  readonly tokens?: boolean
}

/** `EvmLedgers` backed by one in-process devnet per chain, all signing with the same hot wallet. */
export const layerDevnet = (options: DevnetLayerOptions): Layer.Layer<EvmLedgers, EvmInvalidInput> =>
  Layer.scoped(
    EvmLedgers,
    Effect.map(
      Effect.forEach(options.chains ?? evmChainNames, (chain) =>
        Effect.tap(
          makeDevnetLedger({
            chain,
            hotWalletKey: options.hotWalletKey,
            ...(options.mining === undefined ? {} : { mining: options.mining }),
            ...(options.genesisTimestamp === undefined ? {} : { genesisTimestamp: options.genesisTimestamp })
          }),
          // A devnet that cannot deploy its own tokens is a bug, not a setting to fix.
          (ledger) => (options.tokens === true ? Effect.orDie(deployDevnetTokens(ledger)) : Effect.void)
        )),
      ledgersOf
    )
  )
