// The ledger devnet's faucet: a fixed, publicly known key (like anvil's test accounts; it only
// ever holds devnet coins) that the devnet funds at start, so that `devnet pay` has a customer
// wallet to pay from. At start it gets mature coinbases and issues one Omni managed property,
// the devnet dollar (DUSD), granting itself a supply; being the devnet's first property it is
// always property id 3 (Omni's first main-ecosystem id).
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { ECOSYSTEM_MAIN } from "../omni/codec.ts"
import { FIRST_MAIN_PROPERTY_ID, OmniIndexer } from "../omni/indexer.ts"
import { syncOnce } from "./follower.ts"
import { keyWalletAddress, makeKeyWallet, type KeyWallet } from "./keyWallet.ts"
import type { UtxoChainParams } from "../params.ts"
import type { UtxoLedgerShape } from "./UtxoLedger.ts"

/** sha256 of a fixed phrase: the same faucet on every devnet, in every process. */
export const devnetFaucetKey: Uint8Array = createHash("sha256").update("shardline ledger devnet faucet").digest()

export const devnetDollar = {
  code: "DUSD",
  propertyId: FIRST_MAIN_PROPERTY_ID,
  name: "Devnet Dollar",
  divisible: true,
  /** Whole tokens granted to the faucet at start. */
  supplyWhole: 1_000_000_000n
} as const

/** Blocks mined to the faucet at start beyond coinbase maturity: that many spendable coinbases. */
export const faucetMatureCoinbases = 20

export const devnetFaucet = (ledger: UtxoLedgerShape): KeyWallet => makeKeyWallet(ledger, devnetFaucetKey)

/** The faucet's address, without a ledger (the devnet's block clock pays it). */
export const devnetFaucetAddress = (params: UtxoChainParams): string => keyWalletAddress(devnetFaucetKey, params)

/** A coin devnet (BTC, LTC): mature coinbases for the faucet, nothing else. */
export const fundCoinFaucet = (ledger: UtxoLedgerShape): Effect.Effect<void> =>
  Effect.asVoid(ledger.mine(ledger.params.coinbaseMaturity + faucetMatureCoinbases, devnetFaucet(ledger).address)).pipe(Effect.orDie)

/**
 * Funds the faucet on a fresh devnet and issues DUSD. Runs once, at devnet start; anything that
 * fails here is a bug in the devnet, so it dies.
 */
export const fundDevnetFaucet = (ledger: UtxoLedgerShape): Effect.Effect<void> =>
  Effect.gen(function*() {
    const faucet = devnetFaucet(ledger)
    yield* ledger.mine(ledger.params.coinbaseMaturity + faucetMatureCoinbases, faucet.address)
    yield* faucet.omni({
      type: "createManaged",
      ecosystem: ECOSYSTEM_MAIN,
      divisible: devnetDollar.divisible,
      previousPropertyId: 0,
      category: "Devnet",
      subcategory: "Stablecoin",
      name: devnetDollar.name,
      url: "",
      data: "devnet only"
    })
    yield* ledger.mine(1, faucet.address)
    yield* faucet.omni({ type: "grant", property: devnetDollar.propertyId, amount: devnetDollar.supplyWhole * 10n ** 8n, memo: "devnet float" })
    yield* ledger.mine(1, faucet.address)
    // Check what an indexer makes of it: the property id and the balance are what the CLI promises.
    const indexer = new OmniIndexer({ params: ledger.params })
    yield* syncOnce(ledger, indexer)
    const property = indexer.property(devnetDollar.propertyId)
    if (property?.name !== devnetDollar.name || indexer.balance(faucet.address, devnetDollar.propertyId) === 0n) {
      return yield* Effect.dieMessage(`the devnet did not issue ${devnetDollar.code} as property ${devnetDollar.propertyId}`)
    }
  }).pipe(Effect.orDie)
