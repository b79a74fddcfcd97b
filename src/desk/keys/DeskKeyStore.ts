// Desk members and partner API keys in Postgres. The key is shown once and stored as its SHA-256;
// the callback signing secret is sealed with the SecretBox (it must be readable to sign).
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { type DeskCaller, type DeskScope, deskScopes } from "../../../schemas/desk/security.ts"
import { base62Token, isBase62Token, sha256Hex } from "../../crypto/token.ts"
import { SecretBox } from "../../platform/SecretBox.ts"

export interface NewDeskKey {
  readonly scopes: ReadonlyArray<DeskScope>
  readonly callbackUrl?: string | undefined
  readonly feeBps?: number | undefined
}

export interface CreatedDeskKey {
  readonly apiKey: string
  readonly signingSecret: string
  readonly memberId: string
}

/** Standard Webhooks' form: a prefix that says what it is, then 32 random bytes. */
const signingSecret = () => `whsec_${base62Token(43)}`

/** A new member with one key (the CLI's `desk keys create`; a member per call). */
export const createMemberWithKey = (options: NewDeskKey) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const apiKey = base62Token(64)
    const secret = signingSecret()
    return yield* sql.withTransaction(Effect.gen(function*() {
      const [member] = yield* sql<{ id: string }>`INSERT INTO desk_members (fee_bps) VALUES (${options.feeBps ?? null}) RETURNING id`
      yield* sql`INSERT INTO desk_api_keys (key_hash, member_id, scopes, callback_url, signing_secret_enc) VALUES (
        ${sha256Hex(apiKey)}, ${member!.id}, ${[...options.scopes]}::text[], ${options.callbackUrl ?? null}, ${box.seal(secret)})`
      return { apiKey, signingSecret: secret, memberId: member!.id } satisfies CreatedDeskKey
    }))
  })

/** One more key for an existing member (the web app's "create key"); the key and secret are shown once. */
export const createKeyFor = (memberId: string, options: Omit<NewDeskKey, "feeBps">) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const apiKey = base62Token(64)
    const secret = signingSecret()
    const [row] = yield* sql<{ id: string; created_at: Date }>`INSERT INTO desk_api_keys (key_hash, member_id, scopes, callback_url, signing_secret_enc)
      VALUES (${sha256Hex(apiKey)}, ${memberId}, ${[...options.scopes]}::text[], ${options.callbackUrl ?? null}, ${box.seal(secret)})
      RETURNING id::text AS id, created_at`
    return { id: row!.id, createdAt: new Date(row!.created_at), apiKey, signingSecret: secret }
  })

/** Keys a member's list shows at most (newest first). */
export const memberKeysMax = 100

/** A member's live keys, newest first. */
export const memberKeys = (memberId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; scopes: ReadonlyArray<string>; callback_url: string | null; created_at: Date }>`SELECT id::text AS id, scopes, callback_url, created_at
      FROM desk_api_keys WHERE member_id = ${memberId} AND revoked_at IS NULL ORDER BY created_at DESC LIMIT ${memberKeysMax}`)

/** Revokes one of the member's live keys by its id: the key's hash (to forget it now), or none. */
export const revokeMemberKey = (memberId: string, id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)
      ? sql<{ key_hash: string }>`UPDATE desk_api_keys SET revoked_at = now()
          WHERE id = ${id} AND member_id = ${memberId} AND revoked_at IS NULL RETURNING key_hash`.pipe(Effect.map((rows) => Option.fromNullable(rows[0]?.key_hash)))
      : Effect.succeed(Option.none<string>()))

/** True when a live key was revoked. */
export const revokeKey = (apiKey: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`UPDATE desk_api_keys SET revoked_at = now() WHERE key_hash = ${sha256Hex(apiKey)} AND revoked_at IS NULL RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0)
    ))

interface KeyRow {
  readonly id: string
  readonly member_id: string
  readonly scopes: ReadonlyArray<string>
  readonly fee_bps: number | null
  readonly callback_url: string | null
}

/** The caller a live key stands for, by the key's hash. */
export const loadCaller = (sql: SqlClient.SqlClient) => (keyHash: string) =>
  sql<KeyRow>`SELECT k.id, k.member_id, k.scopes, m.fee_bps, k.callback_url
    FROM desk_api_keys k JOIN desk_members m ON m.id = k.member_id
    WHERE k.key_hash = ${keyHash} AND k.revoked_at IS NULL`.pipe(
    Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((r): DeskCaller => ({
      memberId: r.member_id,
      keyId: r.id,
      scopes: deskScopes.filter((s) => r.scopes.includes(s)),
      feeBps: r.fee_bps,
      callbackUrl: r.callback_url
    }))))
  )

/** Only a 64-character base62 string can be a key. */
export const isKeyShaped = (text: string): boolean => isBase62Token(text, 64)

/** The scopes of a key made by wallet linking (spec: Authentication 3). */
export const linkedKeyScopes: ReadonlyArray<DeskScope> = ["cashout", "rewards"]

/**
 * Wallet linking's key turnover, inside the caller's transaction: every live key of the member is
 * revoked and one new key (cashout, rewards) issued. The newest revoked key's callback URL and
 * sealed signing secret carry over, so the partner's callbacks keep verifying; a member without
 * one gets a fresh sealed secret and no callback URL.
 */
export const replaceMemberKeys = (memberId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const revoked = yield* sql<{ callback_url: string | null; signing_secret_enc: string }>`UPDATE desk_api_keys SET revoked_at = now()
      WHERE member_id = ${memberId} AND revoked_at IS NULL RETURNING callback_url, signing_secret_enc, created_at`
    const [carried] = yield* sql<{ callback_url: string | null; signing_secret_enc: string }>`SELECT callback_url, signing_secret_enc
      FROM desk_api_keys WHERE member_id = ${memberId} ORDER BY created_at DESC LIMIT 1`
    const apiKey = base62Token(64)
    yield* sql`INSERT INTO desk_api_keys (key_hash, member_id, scopes, callback_url, signing_secret_enc) VALUES (
      ${sha256Hex(apiKey)}, ${memberId}, ${[...linkedKeyScopes]}::text[], ${carried?.callback_url ?? null},
      ${carried?.signing_secret_enc ?? box.seal(signingSecret())})`
    return { apiKey, revoked: revoked.length, scopes: linkedKeyScopes }
  })
