// The token registry in Postgres (desk_tokens): read, registered on first start, changed by
// `desk tokens set`. Codes match case-insensitively (one unique index on upper(code)).
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { RegisteredList } from "../../platform/ledger/LedgerRegistry.ts"
import { deskIssuerWallet } from "../../platform/ledger/SystemWallet.ts"
import { type BaseAsset, defaultTokens, type DeskToken, type TokenKind } from "./registry.ts"

interface Row {
  readonly code: string
  readonly kind: TokenKind
  readonly base_asset: BaseAsset
  readonly name: string
  readonly property_id: string | null
  readonly min_base: string
  readonly max_base: string
  readonly fee_in_bps: number
  readonly fee_out_bps: number
  readonly required_confirmations: number
  readonly live: boolean
}

const fromRow = (r: Row): DeskToken => ({
  code: r.code,
  kind: r.kind,
  baseAsset: r.base_asset,
  name: r.name,
  propertyId: r.property_id === null ? null : Number(r.property_id),
  minBase: BigInt(r.min_base),
  maxBase: BigInt(r.max_base),
  feeInBps: r.fee_in_bps,
  feeOutBps: r.fee_out_bps,
  requiredConfirmations: r.required_confirmations,
  live: r.live
})

/** Dollar tokens first, then the wrapped ones, each in code order. */
export const listTokens = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<Row>`SELECT code, kind, base_asset, name, property_id::text AS property_id, min_base::text AS min_base, max_base::text AS max_base,
      fee_in_bps, fee_out_bps, required_confirmations, live FROM desk_tokens ORDER BY kind, upper(code)`,
    (rows) => rows.map(fromRow)
  ))

/** The tokens with a property, as the platform's LedgerRegistry lists them: the desk issuer's, nothing granted at issue. */
export const registeredProperties: RegisteredList = Effect.map(listTokens, (tokens) =>
  tokens.flatMap((t) => (t.propertyId === null ? [] : [{ code: t.code, propertyId: t.propertyId, issuer: deskIssuerWallet, grantToFaucet: false }])))

export const findToken = (code: string) =>
  Effect.map(listTokens, (tokens) => tokens.find((t) => t.code.toUpperCase() === code.trim().toUpperCase()))

/** Registers the default tokens that are missing; how many it added. */
export const registerDefaults = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let added = 0
  for (const t of defaultTokens) {
    const inserted = yield* sql`INSERT INTO desk_tokens (code, kind, base_asset, name, min_base, max_base, fee_in_bps, fee_out_bps, required_confirmations, live)
      VALUES (${t.code}, ${t.kind}, ${t.baseAsset}, ${t.name}, ${t.minBase.toString()}, ${t.maxBase.toString()}, ${t.feeInBps}, ${t.feeOutBps}, ${t.requiredConfirmations}, ${t.live})
      ON CONFLICT DO NOTHING RETURNING code`
    added += inserted.length
  }
  return added
})

/** Writes a token's changeable fields (limits, fees, confirmations, property, live). */
export const saveToken = (t: DeskToken) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`UPDATE desk_tokens SET min_base = ${t.minBase.toString()}, max_base = ${t.maxBase.toString()}, fee_in_bps = ${t.feeInBps},
        fee_out_bps = ${t.feeOutBps}, required_confirmations = ${t.requiredConfirmations}, property_id = ${t.propertyId}, live = ${t.live},
        updated_at = now()
      WHERE code = ${t.code}`))
