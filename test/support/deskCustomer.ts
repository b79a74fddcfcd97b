// A desk customer on a node's ledger devnet: a fresh key holding some of a desk token (granted by
// the desk issuer, as a mint would) and native coin for fees, able to send the token on.
import { Effect } from "effect"
import { devnetFaucet } from "../../src/chain/ledger/devnetFaucet.ts"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { deskIssuerWallet } from "../../src/platform/devnet/DevnetChains.ts"
import { FeeSponsor } from "../../src/platform/ledger/FeeSponsor.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import { systemWallet } from "../../src/platform/ledger/SystemWallet.ts"
import { findToken } from "../../src/desk/tokens/tokenStore.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import type { RunningNode } from "./node.ts"
import { runWithDb } from "./services.ts"

export interface DeskCustomer {
  readonly address: string
  /** Its key, for a transaction the wallet would not make (a double spend of its token). */
  readonly privateKey: Uint8Array
  /** Sends `base` units of the token to `to` (mined); the txid. */
  readonly send: (to: string, base: bigint) => Promise<string>
}

const mined = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tap(effect, () => Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    yield* ledger.mine(1, devnetFaucet(ledger).address)
    yield* (yield* OmniView).sync
  }))

/** A customer holding `base` units of desk token `code`. */
export const deskCustomer = async (node: RunningNode, databaseUrl: string, code: string, base: bigint): Promise<DeskCustomer> => {
  const key = randomLedgerKey()
  const property = await runWithDb(databaseUrl, Effect.map(findToken(code), (t) => t!.propertyId!))
  const issuer = await runWithDb(databaseUrl, systemWallet(deskIssuerWallet))
  // Fee coins from the fee sponsor (journaled and serialised, unlike a second faucet wallet beside the node's).
  await node.run(mined(Effect.gen(function*() {
    const sponsor = yield* FeeSponsor
    yield* sponsor.fund(issuer.address, 2, 500_000n)
    yield* sponsor.fund(key.address, 2, 500_000n)
  })))
  await node.run(mined(Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    yield* makeKeyWallet(ledger, issuer.privateKey).omni({ type: "grant", property, amount: base, memo: "" }, key.address)
  })))
  const wallet = node.run(Effect.map(UtxoLedger, (ledger) => makeKeyWallet(ledger, key.privateKey)))
  const w = await wallet
  return {
    address: key.address,
    privateKey: key.privateKey,
    send: (to, amount) => node.run(mined(w.omni({ type: "simpleSend", property, amount }, to)))
  }
}
