// Shared fixtures: deterministic keys, funding transactions the builder can spend, and blocks
// for the indexer. Funding txs are coinbase-shaped (no real input) so no chain is needed.
import { Either } from "effect"
import { payments, Transaction } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { p2pkhAddressOfPubkey } from "../../../src/chain/address.ts"
import { ledgerParams } from "../../../src/chain/params.ts"
import type { Utxo } from "../../../src/chain/txBuilder.ts"

const ECPair = ECPairFactory(ecc)

export const params = ledgerParams

export interface Wallet {
  readonly privateKey: Uint8Array
  readonly publicKey: Uint8Array
  readonly address: string
  readonly script: Uint8Array
}

export const wallet = (seed: number): Wallet => {
  const privateKey = Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? seed : 7 + i))
  const key = ECPair.fromPrivateKey(privateKey, { compressed: true })
  const address = p2pkhAddressOfPubkey(key.publicKey, params)
  if (Either.isLeft(address)) throw new Error(address.left.message)
  return { privateKey, publicKey: key.publicKey, address: address.right, script: payments.p2pkh({ pubkey: key.publicKey }).output! }
}

let nonce = 0
/** A coinbase-shaped tx paying `values` to `script`; each output is a spendable Utxo. */
export const fund = (script: Uint8Array, values: ReadonlyArray<bigint>): { tx: Transaction; utxos: Utxo[] } => {
  const tx = new Transaction()
  tx.version = 2
  // A distinct scriptSig per call keeps txids distinct, as block heights do in coinbases.
  tx.addInput(new Uint8Array(32), 0xffffffff, 0xffffffff, Uint8Array.of(4, ...new Uint8Array(new Uint32Array([++nonce]).buffer)))
  for (const v of values) tx.addOutput(script, v)
  const hex = tx.toHex()
  const txid = tx.getId()
  return { tx, utxos: values.map((value, vout) => ({ txid, vout, value, script, prevTxHex: hex })) }
}

export { unwrap } from "../../../harness/either.ts"
