// Fee coupons in Postgres (desk_coupons). Reading one never uses it; an order that applies one
// uses it once, in the order's own transaction, only while it is still valid.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Coupon } from "./policy.ts"

interface Row {
  readonly code: string
  readonly fee_bps: number
  readonly uses_max: number | null
  readonly uses: number
  readonly expires_at: Date | null
}

const fromRow = (r: Row): Coupon => ({
  code: r.code, feeBps: r.fee_bps, usesMax: r.uses_max, uses: r.uses, expiresAt: r.expires_at === null ? null : new Date(r.expires_at)
})

/** The coupon of a normalized (upper-case) code. */
export const findCoupon = (code: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<Row>`SELECT code, fee_bps, uses_max, uses, expires_at FROM desk_coupons WHERE code = ${code}`, (rows) =>
      rows[0] === undefined ? undefined : fromRow(rows[0])))

export interface NewCoupon {
  readonly code: string
  readonly feeBps: number
  readonly usesMax: number | null
  readonly lifetimeMs: number | null
}

/** Adds a coupon; undefined when the code exists already. */
export const addCoupon = (c: NewCoupon) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<Row>`INSERT INTO desk_coupons (code, fee_bps, uses_max, expires_at)
        VALUES (${c.code}, ${c.feeBps}, ${c.usesMax}, ${c.lifetimeMs === null ? null : new Date(Date.now() + c.lifetimeMs)})
        ON CONFLICT (code) DO NOTHING RETURNING code, fee_bps, uses_max, uses, expires_at`,
      (rows) => rows[0] === undefined ? undefined : fromRow(rows[0])
    ))

/** Uses the coupon once if it is still valid now; false when it expired or ran out meanwhile. */
export const useCoupon = (code: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`UPDATE desk_coupons SET uses = uses + 1
        WHERE code = ${code} AND (uses_max IS NULL OR uses < uses_max) AND (expires_at IS NULL OR expires_at > now()) RETURNING code`,
      (rows) => rows.length > 0
    ))

/** A coupon as the CLI prints it. */
export const couponView = (c: Coupon) => ({
  code: c.code, feeBps: c.feeBps, usesMax: c.usesMax, uses: c.uses, expiresAt: c.expiresAt?.toISOString() ?? null
})
