// A named wallet of the system on the token ledger (the fee sponsor, say): one key, made by the
// first node that asks and shared by every node through `system_wallets`, sealed with the master
// key. (A minimal stand-in for the generic `systemWallet(name)` of SystemWallet.ts; one of the
// two goes when both branches meet.)
import { SqlClient } from "@effect/sql"
import { ECPairFactory } from "ecpair"
import { Effect } from "effect"
import * as ecc from "tiny-secp256k1"
import { keyWalletAddress } from "../../chain/ledger/keyWallet.ts"
import type { UtxoChainParams } from "../../chain/params.ts"
import { SecretBox } from "../SecretBox.ts"

const ECPair = ECPairFactory(ecc)

export interface SystemWalletKey {
  readonly name: string
  readonly address: string
  readonly privateKey: Uint8Array
}

/** The key of wallet `name`, created on first use; a race between nodes keeps the first row. */
export const systemWalletKey = (name: string, params: UtxoChainParams) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const fresh = ECPair.makeRandom({ network: params.network }).privateKey!
    yield* sql`INSERT INTO system_wallets (name, address, key_enc)
      VALUES (${name}, ${keyWalletAddress(fresh, params)}, ${box.seal(Buffer.from(fresh).toString("hex"))})
      ON CONFLICT (name) DO NOTHING`
    const [row] = yield* sql<{ address: string; key_enc: string }>`SELECT address, key_enc FROM system_wallets WHERE name = ${name}`
    const privateKey = Uint8Array.from(Buffer.from(box.open(row!.key_enc), "hex"))
    // The stored address is derived from the stored key; anything else is a corrupted row.
    if (keyWalletAddress(privateKey, params) !== row!.address) {
      return yield* Effect.dieMessage(`system wallet ${name}: the stored key is not the key of ${row!.address}`)
    }
    return { name, address: row!.address, privateKey } satisfies SystemWalletKey
  }).pipe(Effect.orDie)
