// Social accounts the service makes itself (`social account create`, devnet): a fresh BIP-32 seed,
// sealed with the master key; its identity address (m/44'/696969'/0'/0/0, whose WIF the CLI
// prints), its social account xpub (m/44'/696969'/1101'), a #asset id and a starting on-service
// balance. Posting derives each post's key from the same seed.
import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option, Schema } from "effect"
import { extendedKeysAt, signingKeyAt, signingKeyFromSeed } from "../../chain/keys.ts"
import { ledgerParams } from "../../chain/params.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { assetIdOf, postPath, socialAccountPath } from "./socialKeys.ts"

export class AccountRefused extends Schema.TaggedError<AccountRefused>()("AccountRefused", {
  code: Schema.String,
  message: Schema.String
}) {}

export const HANDLE = /^[a-z0-9_]{1,30}$/
/** Attempts at a free #asset id before giving up (a clash is 1 in 2^30 per account). */
const ASSET_ID_ATTEMPTS = 8

export interface NewAccount {
  readonly address: string
  readonly assetId: string
  readonly handle: string | null
  readonly wif: string
}

export const createAccount = (handle: string | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const config = yield* SocialConfig
    if (handle !== undefined && !HANDLE.test(handle)) {
      return yield* new AccountRefused({ code: "invalid_handle", message: "--handle must be 1 to 30 of a-z, 0-9 and _" })
    }
    if (handle !== undefined && (yield* sql`SELECT 1 FROM social_accounts WHERE handle = ${handle}`).length > 0) {
      return yield* new AccountRefused({ code: "handle_taken", message: `the handle @${handle} is taken` })
    }
    const seed = randomBytes(32)
    const identity = Either.getOrThrow(signingKeyFromSeed(seed, ledgerParams))
    const xpub = Either.getOrThrow(extendedKeysAt(seed, socialAccountPath(), ledgerParams)).xpub
    for (let attempt = 0; attempt < ASSET_ID_ATTEMPTS; attempt++) {
      const assetId = assetIdOf(identity.address, attempt)
      const inserted = yield* sql`INSERT INTO social_accounts (address, asset_id, handle, xpub, xpub_path, balance_base, seed_enc)
        VALUES (${identity.address}, ${assetId}, ${handle ?? null}, ${xpub}, ${socialAccountPath()}, ${config.socialStarterBalanceBase.toString()},
          ${box.seal(seed.toString("hex"))})
        ON CONFLICT (asset_id) DO NOTHING RETURNING 1`
      if (inserted.length > 0) return { address: identity.address, assetId, handle: handle ?? null, wif: identity.wif } satisfies NewAccount
    }
    return yield* Effect.dieMessage("no free #asset id after 8 attempts")
  })

export interface AccountRow {
  readonly address: string
  readonly asset_id: string
  readonly handle: string | null
  readonly xpub: string | null
  readonly balance_base: string
  readonly seed_enc: string | null
}

export const findAccount = (address: string): Effect.Effect<Option.Option<AccountRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<AccountRow>`SELECT address, asset_id, handle, xpub, balance_base::text AS balance_base, seed_enc FROM social_accounts WHERE address = ${address}`,
      (rows) => Option.fromNullable(rows[0])))

/** The signing key of an account's identity address or of its post `index`, from the sealed seed. */
export const accountKey = (account: AccountRow, postIndex: number | "identity") =>
  Effect.gen(function*() {
    if (account.seed_enc === null) {
      return yield* new AccountRefused({ code: "no_service_key", message: "this account's keys are in the member's own wallet; the service cannot stamp for it" })
    }
    const box = yield* SecretBox
    const seed = Buffer.from(box.open(account.seed_enc), "hex")
    const key = postIndex === "identity" ? signingKeyFromSeed(seed, ledgerParams) : signingKeyAt(seed, postPath(postIndex), ledgerParams)
    return Either.getOrThrow(key)
  })
