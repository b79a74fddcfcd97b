// Omni properties and balances on a running node's ledger devnet, for exchange tests: issue a
// property from the faucet, fund an address, read a balance through the node's own Omni view.
import { Effect } from "effect"
import { devnetFaucet } from "../../src/chain/ledger/devnetFaucet.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import { faucetOmniSend, issueFaucetProperty } from "../../harness/faucetOmni.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import type { RunningNode } from "./node.ts"

/** A fresh key's ledger address (its key is thrown away: a receiving address nobody spends). */
export const newAddress = (): string => randomLedgerKey().address

/** Mines `n` blocks (coinbases to the faucet) and waits until the node's Omni view has them. */
export const mine = (node: RunningNode, n = 1) =>
  node.run(Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    yield* ledger.mine(n, devnetFaucet(ledger).address)
    return yield* (yield* OmniView).sync
  }))

const synced = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.tap(effect, () => Effect.flatMap(OmniView, (view) => view.sync))

/** Issues a divisible managed property of `whole` tokens to the faucet; its id, once the node's view has it. */
export const issueProperty = (node: RunningNode, name: string, whole: bigint) => node.run(synced(issueFaucetProperty(name, whole)))

/** Sends `sats` of `property` from the faucet to `to`, mines it, and waits for the node's view. */
export const fundOmni = (node: RunningNode, to: string, property: number, sats: bigint) =>
  node.run(synced(faucetOmniSend(to, property, sats)))

/** The node's Omni view of `address` in `property`, after catching up with the ledger. */
export const omniBalance = (node: RunningNode, address: string, property: number) =>
  node.run(Effect.gen(function*() {
    const view = yield* OmniView
    yield* view.sync
    return yield* view.balance(address, property)
  }))

/** Native coin (confirmed) at `address`, sats. */
export const nativeBalance = (node: RunningNode, address: string) =>
  node.run(Effect.map(Effect.flatMap(UtxoLedger, (l) => l.listUnspent([address])), (us) => us.reduce((n, u) => n + u.value, 0n)))

/** Polls `probe` every `everyMs` until it returns a value (not undefined), or fails after `timeoutMs`. */
export const until = async <A>(probe: () => Promise<A | undefined>, timeoutMs = 20_000, what = "condition", everyMs = 100): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
