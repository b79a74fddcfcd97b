// The signed-in member's own view (GET /api/social/me), and the account a wallet gets by signing
// in: an address the service has not seen becomes an account of its own (its #asset id, no
// balance, no keys held by the service: its stamps are signed by the wallet).
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { formatAmount } from "../../chain/units.ts"
import { excerpt } from "../pages/html.ts"
import { assetIdOf } from "./socialKeys.ts"

/** Attempts at a free #asset id (as createAccount). */
const ASSET_ID_ATTEMPTS = 8
export const myPostsMax = 100

export const ensureAccount = (address: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = yield* sql`SELECT 1 FROM social_accounts WHERE address = ${address}`
    if (found.length > 0) return
    for (let attempt = 0; attempt < ASSET_ID_ATTEMPTS; attempt++) {
      const inserted = yield* sql`INSERT INTO social_accounts (address, asset_id) VALUES (${address}, ${assetIdOf(address, attempt)})
        ON CONFLICT DO NOTHING RETURNING 1`
      if (inserted.length > 0) return
      if ((yield* sql`SELECT 1 FROM social_accounts WHERE address = ${address}`).length > 0) return
    }
  })

export const readMe = (address: string, topUpAddress: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [account] = yield* sql<{ asset_id: string; handle: string | null; balance_base: string; seed_enc: string | null; xpub: string | null }>`
      SELECT asset_id, handle, balance_base::text, seed_enc, xpub FROM social_accounts WHERE address = ${address}`
    const posts = yield* sql<{ id: string; short_id: string; kind: string; body: string; state: string; paid_until_ms: string; created_at: Date }>`
      SELECT id::text, short_id, kind, body, state, paid_until_ms::text, created_at FROM social_posts WHERE author = ${address}
      ORDER BY created_at DESC LIMIT ${myPostsMax}`
    return {
      address,
      assetId: account?.asset_id ?? null,
      handle: account?.handle ?? null,
      balance: Either.getOrElse(formatAmount(BigInt(account?.balance_base ?? "0"), 8), () => "0"),
      topUpAddress,
      servicePosting: account?.seed_enc !== null && account !== undefined,
      xpubLinked: account !== undefined && (account.seed_enc !== null || account.xpub !== null),
      posts: posts.map((p) => ({
        id: p.id, shortId: p.short_id, kind: p.kind, body: excerpt(p.body, 280), state: p.state,
        paidUntil: new Date(Number(p.paid_until_ms)).toISOString(), createdAt: new Date(p.created_at).toISOString()
      }))
    }
  })
