// The desk's wallets, all from one HD seed (paths.ts has the tree): a cold and a hot vault and
// a relayer per chain, and the deposit addresses handed
// to members (one permanent address per member and chain) and to orders (a fresh one per
// order). The seed is made on the first start and kept sealed with the master key
// (desk_secrets "hd-seed"); keys are derived in memory and never stored or logged.
//
// Deposit addresses are recorded in desk_deposit_addresses with their index and path; an index
// comes from one database sequence, so an address is never handed to two owners (the table's
// unique keys say so too). Asking again for the same owner answers the same address.
import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { BIP32Factory } from "bip32"
import { Context, Data, Effect, Either, Layer } from "effect"
import * as ecc from "tiny-secp256k1"
import type { SecretBox } from "../../platform/SecretBox.ts"
import { deskSecret } from "./DeskSecrets.ts"
import { type DeskKey, deriveDeskKey } from "./hdTree.ts"
import { DEPOSIT_INDEX_MAX, type DeskChain, deskChains, depositPath, type DeskRole, rolePath } from "./paths.ts"

const bip32 = BIP32Factory(ecc)

export const seedSecretName = "hd-seed"
/** 64 bytes, as a BIP-39 seed is. */
export const seedBytes = 64

/** Why a deposit address was not given. */
export class DeskWalletRefused extends Data.TaggedError("DeskWalletRefused")<{ readonly message: string }> {}

export type DepositPurpose = "member" | "order"

export interface DepositRequest {
  readonly chain: DeskChain
  readonly purpose: DepositPurpose
  /** The member id (purpose member) or the order id (purpose order). */
  readonly owner: string
  readonly memberId: string
}

export interface DepositAddress extends DepositRequest {
  readonly index: number
  readonly path: string
  readonly address: string
}

/** A vault address as the reserves scan groups it. */
export interface VaultAddress {
  readonly chain: DeskChain
  readonly group: "cold" | "hot"
  readonly path: string
  readonly address: string
}

export interface DeskWalletsShape {
  /** BIP-32 fingerprint of the seed's master key (hex), for operators to tell seeds apart. */
  readonly fingerprint: string
  /** A role wallet (index 0 of its account). The Omni issuer is the system wallet "desk-issuer". */
  readonly wallet: (chain: DeskChain, role: Exclude<DeskRole, "deposits">) => DeskKey
  /** Every cold and hot vault, per chain. */
  readonly vaults: ReadonlyArray<VaultAddress>
  /** The owner's deposit address on `chain`, derived and recorded on first ask. */
  readonly depositAddress: (request: DepositRequest) => Effect.Effect<DepositAddress, DeskWalletRefused | SqlError>
  /** The key of a recorded deposit address (to sweep it). */
  readonly depositKey: (chain: DeskChain, index: number) => DeskKey
}

export class DeskWallets extends Context.Tag("shardline/desk/DeskWallets")<DeskWallets, DeskWalletsShape>() {}

interface Row {
  readonly chain: DeskChain
  readonly idx: number
  readonly purpose: DepositPurpose
  readonly owner: string
  readonly member_id: string
  readonly path: string
  readonly address: string
}

const fromRow = (r: Row): DepositAddress => ({
  chain: r.chain, index: r.idx, purpose: r.purpose, owner: r.owner, memberId: r.member_id, path: r.path, address: r.address
})

/** The wallets over a given seed (tests build them without a database). */
export const walletsOf = (seed: Uint8Array) => {
  const derive = (chain: DeskChain, path: string): DeskKey => {
    const key = deriveDeskKey(seed, chain, path)
    // The paths are ours and valid; a seed that cannot derive them is a broken invariant.
    if (Either.isLeft(key)) throw new Error(`desk HD tree: ${key.left.message}`)
    return key.right
  }
  const cache = new Map<string, DeskKey>()
  const wallet = (chain: DeskChain, role: Exclude<DeskRole, "deposits">): DeskKey => {
    const path = rolePath(chain, role)
    const id = `${chain}:${path}`
    let key = cache.get(id)
    if (key === undefined) cache.set(id, key = derive(chain, path))
    return key
  }
  const vaults: ReadonlyArray<VaultAddress> = deskChains.flatMap((chain) =>
    (["cold", "hot"] as const).map((group) => {
      const { address, path } = wallet(chain, group)
      return { chain, group, path, address }
    }))
  return {
    fingerprint: Buffer.from(bip32.fromSeed(Buffer.from(seed)).fingerprint).toString("hex"),
    wallet,
    vaults,
    depositKey: (chain: DeskChain, index: number) => derive(chain, depositPath(chain, index))
  }
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const stored = yield* deskSecret(seedSecretName, () => {
    const seed = randomBytes(seedBytes)
    return { secret: seed.toString("hex"), public: Buffer.from(bip32.fromSeed(seed).fingerprint).toString("hex") }
  })
  const base = walletsOf(Buffer.from(stored.secret, "hex"))

  const read = (r: DepositRequest) =>
    sql<Row>`SELECT chain, idx, purpose, owner, member_id, path, address FROM desk_deposit_addresses
      WHERE chain = ${r.chain} AND purpose = ${r.purpose} AND owner = ${r.owner}`

  const depositAddress: DeskWalletsShape["depositAddress"] = (request) =>
    Effect.gen(function*() {
      if (request.purpose === "member" && request.owner !== request.memberId) {
        return yield* new DeskWalletRefused({ message: "a member's deposit address is owned by that member" })
      }
      const known = (yield* read(request))[0]
      if (known === undefined) {
        const [next] = yield* sql<{ idx: string }>`SELECT nextval('desk_deposit_index_seq')::text AS idx`
        const index = Number(next!.idx)
        if (index > DEPOSIT_INDEX_MAX) return yield* new DeskWalletRefused({ message: "the desk's deposit index space is used up" })
        const key = base.depositKey(request.chain, index)
        // A concurrent ask for the same owner may win: its row is the answer, this index stays unused.
        yield* sql`INSERT INTO desk_deposit_addresses (chain, idx, purpose, owner, member_id, path, address)
          VALUES (${request.chain}, ${index}, ${request.purpose}, ${request.owner}, ${request.memberId}, ${key.path}, ${key.address})
          ON CONFLICT (chain, purpose, owner) DO NOTHING`
      }
      const row = (yield* read(request))[0]
      if (row === undefined) return yield* Effect.dieMessage(`deposit address of ${request.owner}: inserted, then not found`)
      if (row.member_id !== request.memberId) {
        return yield* new DeskWalletRefused({ message: `${request.purpose} ${request.owner} belongs to another member` })
      }
      return fromRow(row)
    })

  return DeskWallets.of({ ...base, depositAddress })
})

export const layer: Layer.Layer<DeskWallets, SqlError, SqlClient.SqlClient | SecretBox> = Layer.effect(DeskWallets, make)
