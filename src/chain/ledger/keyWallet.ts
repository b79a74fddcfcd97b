// A wallet of one P2PKH key on a UtxoLedger: pays native coin, sends Omni payloads (simple
// send, create, grant), all change back to the key. What a devnet faucet (or a test's customer)
// needs; the desk's hot wallets are another matter. Coins it has spent in transactions that are
// not yet in a block are remembered, since the ledger still lists them as unspent until then.
import { ECPairFactory } from "ecpair"
import { Effect, Either, Schema } from "effect"
import * as ecc from "tiny-secp256k1"
import { p2pkhAddressOfPubkey } from "../address.ts"
import type { OmniPayload } from "../omni/codec.ts"
import type { UtxoChainParams } from "../params.ts"
import { buildOmni, buildSend, type BuiltTx, type Utxo } from "../txBuilder.ts"
import { spendable, type LedgerInvalidInput, type LedgerRpcError, type LedgerTxRejected, type LedgerUtxo, type UtxoLedgerShape } from "./UtxoLedger.ts"

const ECPair = ECPairFactory(ecc)

/** The wallet cannot make this payment: not enough coins, a refused address, a builder refusal. */
export class WalletRefused extends Schema.TaggedError<WalletRefused>()("WalletRefused", {
  message: Schema.String
}) {}

export type WalletError = WalletRefused | LedgerInvalidInput | LedgerRpcError | LedgerTxRejected

/** Inputs one payment may spend: bounds the transaction (the builder's own limit is 500). */
export const walletInputsMax = 200
/** Fee headroom per input and per transaction when picking coins, satoshis (1 sat/vB floor). */
const FEE_PER_INPUT_SATS = 150n
const FEE_BASE_SATS = 200n

export interface KeyWallet {
  readonly address: string
  /** Pays `sats` to `to`; the txid once the ledger has taken it. */
  readonly pay: (to: string, sats: bigint) => Effect.Effect<string, WalletError>
  /** An Omni class C transaction from this key; `reference` receives a dust output (the Omni receiver). */
  readonly omni: (payload: OmniPayload, reference?: string) => Effect.Effect<string, WalletError>
  /** Confirmed native coin the wallet can spend now (mature, not spent by a pending payment). */
  readonly spendableSats: Effect.Effect<bigint, LedgerInvalidInput | LedgerRpcError>
}

const outpoint = (u: { readonly txid: string; readonly vout: number }) => `${u.txid}:${u.vout}`

/** The P2PKH address of a 32-byte private key. */
export const keyWalletAddress = (privateKey: Uint8Array, params: UtxoChainParams): string => {
  const key = ECPair.fromPrivateKey(privateKey, { network: params.network, compressed: true })
  const address = p2pkhAddressOfPubkey(key.publicKey, params)
  // A compressed secp256k1 key always has a P2PKH address: anything else is a broken invariant.
  if (Either.isLeft(address)) throw new Error(`wallet key without an address: ${address.left.message}`)
  return address.right
}

/** A wallet over `privateKey` (32 bytes) on `ledger`. Payments from one wallet must not run concurrently. */
export const makeKeyWallet = (ledger: UtxoLedgerShape, privateKey: Uint8Array, params: UtxoChainParams = ledger.params): KeyWallet => {
  const self = keyWalletAddress(privateKey, params)
  /** Outpoints spent by transactions this wallet sent that were not yet in a block when last seen. */
  const spentPending = new Set<string>()

  const coins = Effect.map(ledger.listUnspent([self]), (utxos) => {
    // Once a spend is in a block its outpoint is no longer listed: forget it.
    const listed = new Set(utxos.map(outpoint))
    for (const o of spentPending) if (!listed.has(o)) spentPending.delete(o)
    return spendable(utxos, params).filter((u) => !spentPending.has(outpoint(u)))
  })

  /** Largest coins first until `need` plus fee headroom is covered. */
  const pick = (available: ReadonlyArray<LedgerUtxo>, need: bigint): ReadonlyArray<Utxo> | undefined => {
    const sorted = [...available].sort((a, b) => (a.value === b.value ? 0 : a.value > b.value ? -1 : 1))
    const chosen: Array<Utxo> = []
    let total = 0n
    for (const u of sorted.slice(0, walletInputsMax)) {
      chosen.push({ txid: u.txid, vout: u.vout, value: u.value, script: u.script, prevTxHex: u.prevTxHex })
      total += u.value
      if (total >= need + FEE_BASE_SATS + FEE_PER_INPUT_SATS * BigInt(chosen.length)) return chosen
    }
    return undefined
  }

  const send = (need: bigint, build: (inputs: ReadonlyArray<Utxo>) => ReturnType<typeof buildSend>) =>
    Effect.gen(function*() {
      const available = yield* coins
      const inputs = pick(available, need)
      if (inputs === undefined) {
        const have = available.reduce((n, u) => n + u.value, 0n)
        return yield* new WalletRefused({ message: `the wallet ${self} has ${have} spendable satoshis, not enough for ${need} plus the fee` })
      }
      const built: ReturnType<typeof buildSend> = build(inputs)
      if (Either.isLeft(built)) return yield* new WalletRefused({ message: built.left.message })
      const tx: BuiltTx = built.right
      const txid = yield* ledger.broadcast(tx.hex)
      for (const u of inputs) spentPending.add(outpoint(u))
      return txid
    })

  return {
    address: self,
    pay: (to, sats) =>
      send(sats, (inputs) => buildSend(params, { inputs, signer: { privateKey }, changeAddress: self, outputs: [{ address: to, value: sats }] })),
    omni: (payload, reference) =>
      send(reference === undefined ? 0n : params.dustSats, (inputs) =>
        buildOmni(params, { inputs, signer: { privateKey }, changeAddress: self, payload, ...(reference === undefined ? {} : { reference }) })),
    spendableSats: Effect.map(coins, (us) => us.reduce((n, u) => n + u.value, 0n))
  }
}
