// Probes each chain the node uses (ledger tip, EVM block number and chain id) on a fixed interval,
// each with a timeout, and keeps the last answer: /ops (through NodeReporter) and /metrics read
// that, never the chain itself, so a slow or dead chain node cannot make them hang or fail.
import { Cause, Context, Duration, Effect, Layer, MetricLabel, Ref, Schedule } from "effect"
import { coinKind, evmChainsOf, evmKind, ledgerKind, type ChainKind } from "../ChainsLive.ts"
import { EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { CoinLedgers } from "../../chain/ledger/CoinLedgers.ts"
import { redactUrlCredentials } from "../../chain/ledger/rpcLedger.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { AppConfig } from "../Config.ts"
import { chainHeight, chainUp } from "../Metrics.ts"
import type { ChainReport } from "./OpsView.ts"

/** How long one probe may take before the chain is reported unavailable. */
export const probeTimeoutMs = 2_000
/** Pause between the end of one probe of a chain and the start of the next. */
export const probeIntervalMs = 1_000
/** Error texts in reports are cut to this many characters. */
const errorCharsMax = 200

export interface ChainMonitorShape {
  /** The last report of every chain: the ledger, the EVM chains, then BTC and LTC. */
  readonly latest: Effect.Effect<ReadonlyArray<ChainReport>>
}

export class ChainMonitor extends Context.Tag("shardline/ChainMonitor")<ChainMonitor, ChainMonitorShape>() {}

interface Reading {
  readonly height: number
  readonly chainId?: number
}

/** Whatever a failed probe said, without any credentials a URL in it might carry. */
const errorText = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause)
  const text = typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)
  return redactUrlCredentials(text).slice(0, errorCharsMax)
}

/** The UTXO chains (the token ledger and the wrap desk's coins) have heights but no chain id. */
const isUtxoChain = (chain: ChainReport["chain"]): boolean => chain === "ledger" || chain === "btc" || chain === "ltc"

const unavailable = (chain: ChainReport["chain"], kind: ChainKind, error: string): ChainReport => ({
  chain, kind, available: false, height: null, ...(isUtxoChain(chain) ? {} : { chainId: null }), error, checkedAt: new Date().toISOString()
})

/**
 * One probe of one chain, as a report; never fails (a defect in an adapter is reported too, so the
 * probe loop never dies) and never takes much longer than the timeout.
 */
export const probe = (chain: ChainReport["chain"], kind: ChainKind, read: Effect.Effect<Reading, unknown>): Effect.Effect<ChainReport> =>
  read.pipe(
    Effect.timeoutFail({ duration: Duration.millis(probeTimeoutMs), onTimeout: () => `no answer within ${probeTimeoutMs} ms` }),
    Effect.matchCause({
      onSuccess: (r): ChainReport => ({ chain, kind, available: true, height: r.height, ...(r.chainId === undefined ? {} : { chainId: r.chainId }), checkedAt: new Date().toISOString() }),
      onFailure: (cause) => unavailable(chain, kind, errorText(cause))
    })
  )

const publish = (report: ChainReport) =>
  Effect.sync(() => {
    const labels = [MetricLabel.make("chain", report.chain)]
    chainUp.unsafeUpdate(report.available ? 1 : 0, labels)
    if (report.height !== null) chainHeight.unsafeUpdate(report.height, labels)
  })

interface Target {
  readonly chain: ChainReport["chain"]
  readonly kind: ChainKind
  readonly read: Effect.Effect<Reading, unknown>
}

export const layer: Layer.Layer<ChainMonitor, never, AppConfig | UtxoLedger | EvmLedgers | CoinLedgers> = Layer.scoped(
  ChainMonitor,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const ledger = yield* UtxoLedger
    const evm = yield* EvmLedgers
    const coins = yield* CoinLedgers
    const targets: ReadonlyArray<Target> = [
      { chain: "ledger", kind: ledgerKind(config), read: Effect.map(ledger.tip, (t) => ({ height: t.height })) },
      ...evmChainsOf(config).map((chain): Target => ({
        chain,
        kind: evmKind(config),
        read: Effect.flatMap(evm.get(chain), (l) => Effect.all({ chainId: l.chainId, height: Effect.map(l.blockNumber, Number) }, { concurrency: 2 }))
      })),
      ...coins.chains.map((chain): Target => ({ chain, kind: coinKind(config, chain), read: Effect.map(coins.get(chain).tip, (t) => ({ height: t.height })) }))
    ]
    const initial = targets.map((t) => unavailable(t.chain, t.kind, "not probed yet"))
    yield* Effect.forEach(initial, publish)
    const reports = yield* Ref.make<ReadonlyArray<ChainReport>>(initial)
    // One fiber per chain: a chain that times out delays only its own next report.
    yield* Effect.forEach(targets, (t, i) =>
      probe(t.chain, t.kind, t.read).pipe(
        Effect.tap(publish),
        Effect.flatMap((report) => Ref.update(reports, (all) => all.map((r, j) => (j === i ? report : r)))),
        Effect.repeat(Schedule.spaced(Duration.millis(probeIntervalMs))),
        Effect.forkScoped
      ))
    return { latest: Ref.get(reports) }
  })
)
