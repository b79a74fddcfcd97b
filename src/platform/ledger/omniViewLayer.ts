// TEMPORARY until the settlement branch's OmniView lands: an OmniIndexer following the ledger.
import { Effect, Layer, Schedule } from "effect"
import { syncOnce } from "../../chain/ledger/follower.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../chain/omni/indexer.ts"
import { OmniView } from "./OmniView.ts"

export const layer = Layer.scoped(OmniView, Effect.gen(function*() {
  const ledger = yield* UtxoLedger
  const indexer = new OmniIndexer({ params: ledger.params })
  const lock = yield* Effect.makeSemaphore(1)
  const height = Effect.sync(() => indexer.tip()?.height ?? -1)
  const sync = lock.withPermits(1)(syncOnce(ledger, indexer).pipe(Effect.ignore, Effect.zipRight(height)))
  yield* sync.pipe(Effect.repeat(Schedule.spaced("250 millis")), Effect.forkScoped)
  return OmniView.of({
    balance: (address, property) => Effect.sync(() => indexer.balance(address, property)),
    height,
    sync,
    tx: () => Effect.succeed(undefined)
  })
}))
