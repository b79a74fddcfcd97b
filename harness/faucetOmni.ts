// Omni on a ledger devnet from its faucet, for tests and benchmarks: issue a divisible managed
// property and grant its supply to the faucet, or send some of it to an address; each mined into a
// block. Effects over the UtxoLedger, so a test's node (`node.run`) and a bench's own node both use them.
import { Effect } from "effect"
import { devnetFaucet } from "../src/chain/ledger/devnetFaucet.ts"
import { syncOnce } from "../src/chain/ledger/follower.ts"
import { UtxoLedger } from "../src/chain/ledger/UtxoLedger.ts"
import { ECOSYSTEM_MAIN } from "../src/chain/omni/codec.ts"
import { OmniIndexer } from "../src/chain/omni/indexer.ts"

/** Issues `name` (divisible) with `whole` tokens granted to the faucet; its property id. */
export const issueFaucetProperty = (name: string, whole: bigint, category = "Test") =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const faucet = devnetFaucet(ledger)
    yield* faucet.omni({ type: "createManaged", ecosystem: ECOSYSTEM_MAIN, divisible: true, previousPropertyId: 0, category, subcategory: "", name, url: "", data: "" })
    yield* ledger.mine(1, faucet.address)
    const indexer = new OmniIndexer({ params: ledger.params })
    yield* syncOnce(ledger, indexer)
    const property = indexer.properties().find((p) => p.name === name)?.id
    if (property === undefined) return yield* Effect.dieMessage(`property ${name} was not issued`)
    yield* faucet.omni({ type: "grant", property, amount: whole * 10n ** 8n, memo: "" })
    yield* ledger.mine(1, faucet.address)
    return property
  })

/** The faucet sends `sats` of `property` to `to`, and a block confirms it. */
export const faucetOmniSend = (to: string, property: number, sats: bigint) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const faucet = devnetFaucet(ledger)
    yield* faucet.omni({ type: "simpleSend", property, amount: sats }, to)
    yield* ledger.mine(1, faucet.address)
  })
