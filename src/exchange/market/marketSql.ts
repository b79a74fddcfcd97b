// The Market entity's statements: load a market's open orders at activation, read (and lock)
// the authorizations a batch places against with their totals, and write a batch's changes as one
// statement (a CTE per table, arrays through unnest, so a batch of any size is one round trip).
import { SqlClient, type SqlError, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { accountChannel, accountPayloads } from "../account/AccountReadModel.ts"
import { localId } from "../markets/ids.ts"
import { clientKey } from "../orders/clientKey.ts"
import { decimalToSats } from "./amounts.ts"
import type { Changes, Counters, GrantView, OrderRec, Status } from "./MarketState.ts"

export const OPEN = ["NEW", "PARTIALLY_FILLED"] as const

interface OrderRow {
  readonly order_id: string
  readonly user_id: string
  readonly client_order_id: string
  readonly side: "BUY" | "SELL"
  readonly price_ticks: string
  readonly qty_lots: string
  readonly executed_lots: string
  readonly quote_executed: string
  readonly status: Status
  readonly seq: string
  readonly grant_id: string
  readonly reserved: string
  readonly created_ms: string
  readonly updated_ms: string
  readonly from_address: string | null
  readonly expires_ms: string | null
  readonly pay_to: string | null
}

const toRec = (r: OrderRow): OrderRec => ({
  orderId: Number(r.order_id),
  userId: Number(r.user_id),
  clientOrderId: r.client_order_id,
  side: r.side,
  priceTicks: Number(r.price_ticks),
  qtyLots: Number(r.qty_lots),
  executedLots: Number(r.executed_lots),
  quoteExecuted: BigInt(r.quote_executed),
  status: r.status,
  seq: Number(r.seq),
  grantId: r.grant_id,
  fromAddress: r.from_address ?? "",
  payTo: r.pay_to ?? "",
  reserved: BigInt(r.reserved),
  createdMs: Number(r.created_ms),
  updatedMs: Number(r.updated_ms),
  // A grant that is gone (expired or replaced while the market slept): its orders expire at once.
  expiresAtMs: r.expires_ms === null ? 0 : Number(r.expires_ms)
})

const orderColumns = (sql: SqlClient.SqlClient) => sql`o.order_id::text, o.user_id::text, o.client_order_id, o.side,
  o.price_ticks::text, o.qty_lots::text, o.executed_lots::text, o.quote_executed::text, o.status, o.seq::text,
  o.grant_id, o.reserved::text, o.created_ms::text, o.updated_ms::text,
  a.delegated_address AS from_address, (extract(epoch FROM a.expires_at) * 1000)::bigint::text AS expires_ms,
  (SELECT address FROM user_addresses ua WHERE ua.user_id = o.user_id ORDER BY created_at, address LIMIT 1) AS pay_to`

/** The open orders of a market in priority order, and its counters. */
export const loadOpen = (marketId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<OrderRow>`SELECT ${orderColumns(sql)} FROM orders o LEFT JOIN authorizations a ON a.grant_id = o.grant_id
      WHERE o.market_id = ${marketId} AND o.status IN ('NEW', 'PARTIALLY_FILLED') ORDER BY o.seq`
    const counters = yield* sql<{ last_order: string | null; last_seq: string | null; last_trade: string | null }>`SELECT
      (SELECT max(order_id)::text FROM orders WHERE market_id = ${marketId}) AS last_order,
      (SELECT max(seq)::text FROM orders WHERE market_id = ${marketId}) AS last_seq,
      (SELECT max(trade_id)::text FROM trades WHERE market_id = ${marketId}) AS last_trade`
    const c = counters[0]!
    const result: Counters = {
      lastOrder: c.last_order === null ? 0 : localId(Number(c.last_order)),
      lastTrade: c.last_trade === null ? 0 : localId(Number(c.last_trade)),
      lastSeq: c.last_seq === null ? 0 : Number(c.last_seq)
    }
    return { open: rows.map(toRec), counters: result }
  })

/** One order of the market by user and client order id (any status), for a redelivered place. */
export const orderByClientId = (marketId: number, userId: number, clientOrderId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<OrderRow>`SELECT ${orderColumns(sql)} FROM orders o LEFT JOIN authorizations a ON a.grant_id = o.grant_id
      WHERE o.client_key = ${clientKey(marketId, userId, clientOrderId)}`
    return rows[0] === undefined ? undefined : toRec(rows[0])
  })

/**
 * The client order id probe of a batch's read (readForPlaces): by the stored key (migration 0046), which one index serves
 * even on a fresh table's statistics (test/integration/orders-client-key.test.ts reads its plan).
 */
export const clientIdsProbe = (sql: SqlClient.SqlClient, marketId: number, pairs: ReadonlyArray<readonly [number, string]>) =>
  sql<{ user_id: string; client_order_id: string }>`SELECT o.user_id::text, o.client_order_id FROM orders o
    WHERE o.client_key = ANY(${pairs.map((p) => clientKey(marketId, p[0], p[1]))}::text[])`

export interface GrantKey {
  readonly userId: number
  readonly asset: string
  readonly propertyId: number
}

interface GrantRow {
  readonly user_id: string
  readonly asset: string
  readonly grant_id: string
  readonly cap: string
  readonly expires_ms: string
  readonly delegated_address: string
  readonly reserved: string
  readonly used: string
  readonly pending_out: string
}

/**
 * The live authorizations of these (user, asset) pairs, locked for the transaction in (user,
 * asset) order (two markets placing for one grant wait for each other instead of both spending
 * its cap), with cap − used − reserved over every market and the on-chain balance's share not yet
 * spent. `used` is the grant's running totals (one row per market, 0043) less its failed legs, not
 * a sum over every leg it paid. `viewHeight` is the block the node's Omni view has applied: a leg
 * in a block at or below it is already in the balance, any other leg is still to come off it.
 */
const grantRows = (sql: SqlClient.SqlClient, keys: ReadonlyArray<GrantKey>, viewHeight: number) =>
  sql`SELECT a.user_id::text, a.asset, a.grant_id, a.cap::text, (extract(epoch FROM a.expires_at) * 1000)::bigint::text AS expires_ms,
        a.delegated_address,
        COALESCE((SELECT sum(o.reserved) FROM orders o WHERE o.grant_id = a.grant_id AND o.status IN ('NEW', 'PARTIALLY_FILLED')), 0)::text AS reserved,
        (COALESCE((SELECT sum(t.recorded) FROM exchange_grant_leg_totals t WHERE t.grant_id = a.grant_id), 0)
          - COALESCE((SELECT sum(l.amount) FROM settlement_legs l WHERE l.grant_id = a.grant_id AND l.status = 'failed'), 0))::text AS used,
        COALESCE((SELECT sum(l.amount) FROM settlement_legs l WHERE l.from_address = a.delegated_address AND l.status <> 'failed'
          AND (l.block_height IS NULL OR l.block_height > ${viewHeight})), 0)::text AS pending_out
      FROM authorizations a
      JOIN unnest(${keys.map((k) => String(k.userId))}::bigint[], ${keys.map((k) => k.asset)}::text[]) AS k(u, s)
        ON a.user_id = k.u AND a.asset = k.s
      ORDER BY a.user_id, a.asset
      FOR UPDATE OF a`

/** The batch's view of each grant row, its on-chain share from `balanceOf` (the node's Omni view). */
const grantViews = (
  keys: ReadonlyArray<GrantKey>,
  rows: ReadonlyArray<GrantRow>,
  balanceOf: (address: string, propertyId: number) => Effect.Effect<bigint>
) =>
  Effect.gen(function*() {
    const views = new Map<string, GrantView>()
    for (const r of rows) {
      const key = keys.find((k) => k.userId === Number(r.user_id) && k.asset === r.asset)!
      const reserved = BigInt(r.reserved)
      const onChain = yield* balanceOf(r.delegated_address, key.propertyId)
      views.set(`${r.user_id}:${r.asset}`, {
        grantId: r.grant_id,
        userId: Number(r.user_id),
        asset: r.asset,
        expiresAtMs: Number(r.expires_ms),
        delegatedAddress: r.delegated_address,
        capFree: decimalToSats(r.cap) - BigInt(r.used) - reserved,
        fundedFree: onChain - BigInt(r.pending_out) - reserved
      })
    }
    return views
  })

/**
 * How a batch's read is run: as a statement of the ambient transaction (the default), or as one
 * of a pipelined transaction's (platform/database/pipelinedTransaction.ts: the batch's own).
 */
export type Query = <A extends object>(statement: Statement.Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
const inAmbient: Query = (statement) => statement

/** The grants of `keys`, locked for the transaction, as the batch sees them (grantRows says how). */
export const lockGrants = (
  keys: ReadonlyArray<GrantKey>,
  viewHeight: number,
  balanceOf: (address: string, propertyId: number) => Effect.Effect<bigint>,
  query: Query = inAmbient
) =>
  Effect.gen(function*() {
    if (keys.length === 0) return new Map<string, GrantView>()
    const sql = yield* SqlClient.SqlClient
    return yield* grantViews(keys, yield* query(sql<GrantRow>`${grantRows(sql, keys, viewHeight)}`), balanceOf)
  })

/**
 * A batch's reads before it matches, in one round trip: which of its (user, client order id)
 * pairs are taken (clientIdsProbe) and its grants, locked (grantRows). Two statements were two
 * round trips, each ~110 µs of the node's CPU in the socket write alone (see writeChanges).
 */
export const readForPlaces = (
  marketId: number,
  pairs: ReadonlyArray<readonly [number, string]>,
  keys: ReadonlyArray<GrantKey>,
  viewHeight: number,
  balanceOf: (address: string, propertyId: number) => Effect.Effect<bigint>,
  query: Query = inAmbient
) =>
  Effect.gen(function*() {
    if (pairs.length === 0) return { seen: new Set<string>(), grants: yield* lockGrants(keys, viewHeight, balanceOf, query) }
    const sql = yield* SqlClient.SqlClient
    const rows = yield* query(sql<{ taken: ReadonlyArray<{ user_id: string; client_order_id: string }>; grants: ReadonlyArray<GrantRow> }>`
      WITH taken AS (${clientIdsProbe(sql, marketId, pairs)}), grants AS (${keys.length === 0 ? sql`SELECT NULL LIMIT 0` : grantRows(sql, keys, viewHeight)})
      SELECT (SELECT coalesce(json_agg(taken), '[]') FROM taken) AS taken, (SELECT coalesce(json_agg(grants), '[]') FROM grants) AS grants`)
    const row = rows[0]!
    const seen = new Set(row.taken.map((r) => `${r.user_id}\u0000${r.client_order_id}`))
    return { seen, grants: yield* grantViews(keys, row.grants, balanceOf) }
  })

/** Each user's receiving address (the first they registered). */
export const payToAddresses = (userIds: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ user_id: string; address: string }>`SELECT DISTINCT ON (user_addresses.user_id) user_id::text, address
      FROM user_addresses WHERE user_id = ANY(${userIds.map(String)}::bigint[]) ORDER BY user_addresses.user_id, created_at, address`
    return new Map(rows.map((r) => [Number(r.user_id), r.address]))
  })

/**
 * Writes a batch in one statement: new orders, changed orders, trades, legs and their grants'
 * running totals as data-modifying CTEs, and the main query tells every node's account model. One
 * round trip instead of up to six: in the orders bench each statement cost the node ~110 µs in the
 * socket write alone (pg's `writev`, 11 % of the node's CPU at 7 statements a batch, session 24).
 * The CTEs see one snapshot, which is enough: `updated` holds only orders that were in the table
 * before the batch (an order placed in the batch stays in `inserted` with its final state), and
 * the legs' foreign key to their trades is checked at the statement's end, after every CTE ran.
 */
export const writeStatement = (
  sql: SqlClient.SqlClient,
  marketId: number,
  c: Changes,
  more: { readonly notifications: ReadonlyArray<readonly [string, string]>; readonly klines: (sql: SqlClient.SqlClient) => Statement.Fragment | undefined } = { notifications: [], klines: () => undefined }
): Statement.Statement<object> | undefined => {
  const parts = writeParts(sql, marketId, c)
  const klines = more.klines(sql)
  if (klines !== undefined) parts.push(sql`klines AS (${klines})`)
  const notifications = more.notifications
  if (parts.length === 0 && c.users.size === 0 && notifications.length === 0) return undefined
  // Every user of the batch in one notification (a few for a huge batch): one message to each
  // node's LISTEN connection instead of one per user. Then the caller's (the batch's market
  // data), in their order: Postgres delivers a transaction's notifications in the order made.
  const all = [...accountPayloads([...c.users]).map((p) => [accountChannel, p] as const), ...notifications]
  return sql`${sql.csv("WITH", parts)} SELECT pg_notify(n.c, n.p) FROM unnest(${all.map(([ch]) => ch)}::text[], ${all.map(([, p]) => p)}::text[])
      WITH ORDINALITY AS n(c, p, i) ORDER BY n.i`
}

/** writeStatement, run in the ambient transaction. */
export const writeChanges = (marketId: number, c: Changes, more?: Parameters<typeof writeStatement>[3]) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const statement = writeStatement(sql, marketId, c, more)
    if (statement !== undefined) yield* statement
  })

/** The CTEs of a batch's write, each only when it has rows. */
const writeParts = (sql: SqlClient.SqlClient, marketId: number, c: Changes) => {
  const parts = []
  const ins = [...c.inserted.values()]
  if (ins.length > 0) {
    parts.push(sql`new_orders AS (INSERT INTO orders (order_id, market_id, user_id, client_order_id, side, price_ticks, qty_lots, executed_lots,
          quote_executed, status, seq, grant_id, reserved, created_ms, updated_ms)
        SELECT id, ${marketId}, u, c, s, p, q, e, qe, st, seq, g, r, cm, um FROM unnest(
          ${ins.map((o) => String(o.orderId))}::bigint[], ${ins.map((o) => String(o.userId))}::bigint[], ${ins.map((o) => o.clientOrderId)}::text[],
          ${ins.map((o) => o.side)}::text[], ${ins.map((o) => String(o.priceTicks))}::bigint[], ${ins.map((o) => String(o.qtyLots))}::bigint[],
          ${ins.map((o) => String(o.executedLots))}::bigint[], ${ins.map((o) => String(o.quoteExecuted))}::numeric[], ${ins.map((o) => o.status)}::text[],
          ${ins.map((o) => String(o.seq))}::bigint[], ${ins.map((o) => o.grantId)}::text[], ${ins.map((o) => String(o.reserved))}::numeric[],
          ${ins.map((o) => String(o.createdMs))}::bigint[], ${ins.map((o) => String(o.updatedMs))}::bigint[]
        ) AS v(id, u, c, s, p, q, e, qe, st, seq, g, r, cm, um))`)
  }
  const upd = [...c.updated.values()]
  if (upd.length > 0) {
    parts.push(sql`changed_orders AS (UPDATE orders o SET executed_lots = v.e, quote_executed = v.qe, status = v.st, reserved = v.r, updated_ms = v.um
        FROM unnest(${upd.map((o) => String(o.orderId))}::bigint[], ${upd.map((o) => String(o.executedLots))}::bigint[],
          ${upd.map((o) => String(o.quoteExecuted))}::numeric[], ${upd.map((o) => o.status)}::text[],
          ${upd.map((o) => String(o.reserved))}::numeric[], ${upd.map((o) => String(o.updatedMs))}::bigint[]) AS v(id, e, qe, st, r, um)
        WHERE o.order_id = v.id)`)
  }
  const t = c.trades
  if (t.length > 0) {
    const l = c.legs
    parts.push(
      sql`new_trades AS (INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id,
          buyer_user, seller_user, buyer_is_maker, time_ms)
        SELECT id, ${marketId}, p, q, qq, mk, tk, b, s, bm, tm FROM unnest(
          ${t.map((x) => String(x.tradeId))}::bigint[], ${t.map((x) => String(x.priceTicks))}::bigint[], ${t.map((x) => String(x.qtyLots))}::bigint[],
          ${t.map((x) => String(x.quoteSats))}::numeric[], ${t.map((x) => String(x.makerOrderId))}::bigint[], ${t.map((x) => String(x.takerOrderId))}::bigint[],
          ${t.map((x) => String(x.buyerUser))}::bigint[], ${t.map((x) => String(x.sellerUser))}::bigint[], ${t.map((x) => x.buyerIsMaker)}::boolean[],
          ${t.map((x) => String(x.timeMs))}::bigint[]
        ) AS v(id, p, q, qq, mk, tk, b, s, bm, tm))`,
      // The legs and their grants' running totals in this market.
      sql`new_legs AS (INSERT INTO settlement_legs (trade_id, leg, asset, property_id, amount, grant_id, from_address, to_address)
          SELECT * FROM unnest(${l.map((x) => String(x.tradeId))}::bigint[], ${l.map((x) => x.leg)}::text[], ${l.map((x) => x.asset)}::text[],
            ${l.map((x) => String(x.propertyId))}::bigint[], ${l.map((x) => String(x.amount))}::numeric[], ${l.map((x) => x.grantId)}::text[],
            ${l.map((x) => x.from)}::text[], ${l.map((x) => x.to)}::text[])
          RETURNING grant_id, amount)`,
      sql`leg_totals AS (INSERT INTO exchange_grant_leg_totals AS g (grant_id, market_id, recorded)
          SELECT grant_id, ${marketId}, sum(amount) FROM new_legs GROUP BY grant_id
        ON CONFLICT (grant_id, market_id) DO UPDATE SET recorded = g.recorded + EXCLUDED.recorded)`
    )
  }
  return parts
}

/** Legs the ledger took after their bytes were stored: 'signed' → 'broadcast', for every grant of a batch in one statement. */
export const recordBroadcasts = (legs: ReadonlyArray<{ readonly tradeId: string; readonly leg: string }>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE settlement_legs l SET status = 'broadcast', broadcasts = l.broadcasts + 1, updated_at = now()
      FROM unnest(${legs.map((x) => x.tradeId)}::bigint[], ${legs.map((x) => x.leg)}::text[]) AS v(trade_id, leg)
      WHERE l.trade_id = v.trade_id AND l.leg = v.leg AND l.status = 'signed'`
  })
