// The system's own ledger wallets ('asset-issuer', 'fee-sponsor'): one P2PKH key per name, made
// by the first node that asks, sealed with the master key (SecretBox) in `system_wallets`, and
// shared by every node of a cluster through that row. The first insert wins (ON CONFLICT DO
// NOTHING, then read back), so nodes starting together agree on one key.
//
// `ledgerKey` and `openLedgerKey` are the same sealing for any other stored ledger key (the
// demo wallets of `demo trader`).
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { ECPairFactory } from "ecpair"
import { Effect } from "effect"
import * as ecc from "tiny-secp256k1"
import { keyWalletAddress } from "../../chain/ledger/keyWallet.ts"
import { ledgerParams } from "../../chain/params.ts"
import { SecretBox, type SecretBoxShape } from "../SecretBox.ts"

const ECPair = ECPairFactory(ecc)

export interface LedgerKey {
  readonly address: string
  /** 32 bytes: what `makeKeyWallet` and the transaction builder's signer take. */
  readonly privateKey: Uint8Array
}

/** A system wallet's name: lowercase words joined by dashes. */
/** The system wallet that issues the market assets. */
export const assetIssuerWallet = "asset-issuer"
/**
 * The system wallet that issues the token desk's Omni properties (its dollar tokens and wBTC,
 * wLTC, wETH) and alone grants and revokes them; their supply is never granted to the faucet.
 * Named here, beside the other system wallets, so the desk reaches it without a devnet module.
 */
export const deskIssuerWallet = "desk-issuer"

export const systemWalletNamePattern = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/

/** A fresh random key and its sealed form (the WIF, sealed), to store. */
export const ledgerKey = (box: SecretBoxShape): LedgerKey & { readonly sealed: string } => {
  const key = ECPair.makeRandom({ network: ledgerParams.network, compressed: true })
  const privateKey = new Uint8Array(key.privateKey!)
  return { address: keyWalletAddress(privateKey, ledgerParams), privateKey, sealed: box.seal(key.toWIF()) }
}

/**
 * Opens a stored key and checks it against the address stored beside it: a mismatch is a
 * broken invariant (a row edited by hand, or another master key), so it dies loudly.
 */
export const openLedgerKey = (box: SecretBoxShape, sealed: string, address: string, what: string): LedgerKey => {
  const key = ECPair.fromWIF(box.open(sealed), ledgerParams.network)
  const privateKey = new Uint8Array(key.privateKey!)
  const derived = keyWalletAddress(privateKey, ledgerParams)
  if (derived !== address) throw new Error(`${what}: the sealed key is for ${derived}, not the stored address ${address}`)
  return { address, privateKey }
}

/** The system wallet `name`, created on first use; the same key on every node and every call. */
export const systemWallet = (name: string): Effect.Effect<LedgerKey, SqlError, SqlClient.SqlClient | SecretBox> =>
  Effect.gen(function*() {
    if (!systemWalletNamePattern.test(name)) return yield* Effect.dieMessage(`system wallet name "${name}" is not lowercase-dashed`)
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const read = sql<{ address: string; key_enc: string }>`SELECT address, key_enc FROM system_wallets WHERE name = ${name}`
    let [row] = yield* read
    if (row === undefined) {
      const fresh = ledgerKey(box)
      yield* sql`INSERT INTO system_wallets (name, address, key_enc) VALUES (${name}, ${fresh.address}, ${fresh.sealed})
        ON CONFLICT (name) DO NOTHING`
      ;[row] = yield* read
      if (row === undefined) return yield* Effect.dieMessage(`system wallet ${name}: inserted, then not found`)
    }
    return openLedgerKey(box, row.key_enc, row.address, `system wallet ${name} (table system_wallets)`)
  })
