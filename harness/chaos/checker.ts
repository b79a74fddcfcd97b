// Reads the history and the final state (Postgres and the chain) and says what does not hold.
// Each violation names its rule and carries the smallest history that shows it: the entries of
// the one order, grant or trader involved.
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { omniChainIndex } from "../omniChainIndex.ts"
import type { Entry, History } from "./history.ts"
import type { BookSample, ExchangeWorld } from "./exchangeWorkload.ts"
import { distribution, latenessSplit } from "./timerRules.ts"
import { inWindow, type Window } from "./windows.ts"
import type { World } from "./world.ts"

export interface Violation {
  readonly rule: string
  readonly detail: string
  readonly history: ReadonlyArray<Entry>
  /** What the cluster's storage holds about it (messageTrail.ts), where that explains more than the history. */
  readonly trail?: ReadonlyArray<string>
}

export interface Checked {
  readonly violations: ReadonlyArray<Violation>
  /** What was counted, for the summary: orders, trades, legs, grants expired, timer lateness. */
  readonly counts: Readonly<Record<string, number | string>>
}

const is5xx = (e: Entry) => e.outcome.kind === "answer" && e.outcome.status >= 500

/** An answer outside the exchange's `{code,msg}` shape, or the desk/social `{error:{code,message}}` (only error statuses are looked at). */
const outOfShape = (e: Entry) => {
  if (e.outcome.kind !== "answer" || e.outcome.status < 400) return false
  const b = e.outcome.body as any
  const exchange = b !== null && typeof b === "object" && typeof b.code === "number" && typeof b.msg === "string"
  const other = b !== null && typeof b === "object" && typeof b.error?.code === "string" && typeof b.error?.message === "string"
  return !(exchange || other)
}

export const checkRun = async (world: World, ex: ExchangeWorld, history: History, book: ReadonlyArray<BookSample>, windows: ReadonlyArray<Window>, runStartEpochMs: number): Promise<Checked> => {
  const v: Array<Violation> = []
  const add = (rule: string, detail: string, subject?: string) => v.push({ rule, detail, history: subject === undefined ? [] : history.about(subject) })

  // Answers: no 5xx outside a fault window, every error in its service's shape.
  for (const e of history.entries) {
    if (is5xx(e) && !inWindow(windows, e.atMs)) add("no 5xx outside fault windows", `${e.op} at ${(e.atMs / 1000).toFixed(1)} s on ${e.node}: ${JSON.stringify(e.outcome)}`, e.subject)
    if (outOfShape(e)) add("errors in the service's shape", `${e.op} at ${(e.atMs / 1000).toFixed(1)} s: ${JSON.stringify(e.outcome)}`, e.subject)
  }

  // Orders: every acknowledged one exists under its client id with the id it was given; nothing else exists.
  const orders = await world.query<{ order_id: string; user_id: string; client_order_id: string; qty_lots: string; executed_lots: string; status: string; grant_id: string }>(
    `SELECT o.order_id::text, o.user_id::text, o.client_order_id, o.qty_lots::text, o.executed_lots::text, o.status, o.grant_id FROM orders o JOIN markets m ON m.id = o.market_id WHERE m.symbol = 'CHAOSACHAOSB'`)
  const byClient = new Map(orders.map((o) => [`${o.user_id}/${o.client_order_id}`, o]))
  const sent = new Set(history.entries.filter((e) => e.op === "order").map((e) => e.subject))
  const acked = history.entries.filter((e) => e.op === "order" && e.outcome.kind === "answer" && e.outcome.status === 200)
  for (const a of acked) {
    const row = byClient.get(a.subject)
    const told = String((a.outcome as any).body?.orderId)
    if (row === undefined) add("every acknowledged order exists", `${a.subject} acknowledged as ${told}, not in orders`, a.subject)
    else if (row.order_id !== told) add("every acknowledged order exists", `${a.subject} acknowledged as ${told}, stored as ${row.order_id}`, a.subject)
  }
  for (const key of byClient.keys()) if (!sent.has(key)) add("no order no client sent", `${key} is in orders`, key)

  // Fills: executed = the trades it took part in, never above its quantity; told fills are trades.
  const trades = await world.query<{ trade_id: string; qty_lots: string; maker_order_id: string; taker_order_id: string; time_ms: string; buyer_user: string; seller_user: string }>(
    `SELECT t.trade_id::text, t.qty_lots::text, t.maker_order_id::text, t.taker_order_id::text, t.time_ms::text, t.buyer_user::text, t.seller_user::text FROM trades t JOIN markets m ON m.id = t.market_id WHERE m.symbol = 'CHAOSACHAOSB'`)
  const filled = new Map<string, bigint>()
  for (const t of trades) for (const id of [t.maker_order_id, t.taker_order_id]) filled.set(id, (filled.get(id) ?? 0n) + BigInt(t.qty_lots))
  for (const o of orders) {
    const subject = `${o.user_id}/${o.client_order_id}`
    if (BigInt(o.executed_lots) !== (filled.get(o.order_id) ?? 0n)) add("executed = its trades", `order ${o.order_id}: executed ${o.executed_lots}, trades ${filled.get(o.order_id) ?? 0n}`, subject)
    if (BigInt(o.executed_lots) > BigInt(o.qty_lots)) add("no order filled beyond its quantity", `order ${o.order_id}: ${o.executed_lots} > ${o.qty_lots}`, subject)
  }
  const tradeIds = new Set(trades.map((t) => t.trade_id))
  for (const a of acked) {
    for (const f of ((a.outcome as any).body?.fills ?? []) as Array<{ tradeId: number }>) {
      if (!tradeIds.has(String(f.tradeId))) add("every fill told is a trade", `${a.subject}: fill ${f.tradeId} is no trade`, a.subject)
    }
  }

  // The book never crossed: every sample, and the open orders at the end.
  for (const s of book) {
    if (s.bestBid !== undefined && s.bestAsk !== undefined && Number(s.bestBid) >= Number(s.bestAsk)) add("the book never crossed", `at ${(s.atMs / 1000).toFixed(1)} s on ${s.node}: bid ${s.bestBid} ≥ ask ${s.bestAsk}`)
  }
  const [spread] = await world.query<{ bid: string | null; ask: string | null }>(`SELECT
    (SELECT max(o.price_ticks)::text FROM orders o JOIN markets m ON m.id = o.market_id WHERE m.symbol = 'CHAOSACHAOSB' AND o.side = 'BUY' AND o.status IN ('NEW','PARTIALLY_FILLED')) AS bid,
    (SELECT min(o.price_ticks)::text FROM orders o JOIN markets m ON m.id = o.market_id WHERE m.symbol = 'CHAOSACHAOSB' AND o.side = 'SELL' AND o.status IN ('NEW','PARTIALLY_FILLED')) AS ask`)
  if (spread?.bid != null && spread.ask != null && BigInt(spread.bid) >= BigInt(spread.ask)) add("the book never crossed", `open orders at the end: bid ${spread.bid} ≥ ask ${spread.ask} ticks`)

  // Legs: two per trade, one transaction each, all final; on chain exactly once.
  const legs = await world.query<{ trade_id: string; leg: string; txid: string | null; from_address: string; to_address: string; amount: string; status: string }>(
    `SELECT trade_id::text, leg, txid, from_address, to_address, amount::text, status FROM settlement_legs WHERE trade_id = ANY($1::bigint[])`, [trades.map((t) => t.trade_id)])
  const legsOf = new Map<string, number>()
  for (const l of legs) legsOf.set(l.trade_id, (legsOf.get(l.trade_id) ?? 0) + 1)
  for (const t of trades) if (legsOf.get(t.trade_id) !== 2) add("every trade has its two legs", `trade ${t.trade_id}: ${legsOf.get(t.trade_id) ?? 0} legs`)
  // An unsigned leg has no txid yet ("every leg final" names it); the signed ones must not share one.
  const txids = legs.flatMap((l) => (l.txid === null ? [] : [l.txid]))
  if (new Set(txids).size !== txids.length) add("one transaction per leg", `${txids.length} signed legs, ${new Set(txids).size} distinct txids`)
  for (const l of legs) if (l.status !== "final") add("every leg final", `trade ${l.trade_id} ${l.leg}: ${l.status} (${l.txid})`)

  // A fresh index of the final chain: an index kept through the run would still hold the records of reorged-away blocks.
  const { run, ledger } = ex.chain
  const chain = omniChainIndex()
  await run(syncOnce(ledger, chain.consumer))
  const nowMs = Date.now()
  const expiredGrants: Array<string> = []
  for (const t of ex.traders) {
    const own = t.side === "SELL" ? ex.tokA : ex.tokB
    const other = t.side === "SELL" ? ex.tokB : ex.tokA
    const mine = legs.filter((l) => l.from_address === t.delegated)
    const sends = chain.records.filter((r) => r.valid && r.sender === t.delegated && r.payload?.type === "simpleSend")
    const legTxids = new Set(mine.map((l) => l.txid))
    const onChainLegs = sends.filter((r) => legTxids.has(r.txid))
    if (onChainLegs.length !== mine.length) add("every leg on chain exactly once", `${t.name}: ${mine.length} legs recorded, ${onChainLegs.length} on chain`)
    const others = sends.filter((r) => !legTxids.has(r.txid))
    const received = legs.filter((l) => l.to_address === t.address).reduce((s, l) => s + BigInt(l.amount), 0n)
    if (chain.indexer.balance(t.address, other) !== received) add("each trader's address holds the sum of its legs", `${t.name}: holds ${chain.indexer.balance(t.address, other)} of ${other}, legs paid ${received}`)
    const expired = t.expiresAtMs < nowMs
    if (expired) {
      expiredGrants.push(t.grantId)
      // The expiry: one event, the key gone, the rest swept back to the trader's own address in one send.
      const events = await world.query<{ n: number }>(`SELECT count(*)::int AS n FROM authorization_events WHERE grant_id = $1 AND kind = 'expired'`, [t.grantId])
      if (events[0]!.n !== 1) add("every authorization expired once", `${t.name}'s grant ${t.grantId}: ${events[0]!.n} expired events`, t.grantId)
      const keys = await world.query<{ n: number }>(`SELECT count(*)::int AS n FROM authorization_keys WHERE grant_id = $1`, [t.grantId])
      if (keys[0]!.n !== 0) add("an expired key is unrecoverable", `${t.name}'s grant ${t.grantId}: its sealed key is still stored`, t.grantId)
      if (chain.indexer.balance(t.delegated, own) !== 0n) add("an expired grant is swept back", `${t.name}: ${chain.indexer.balance(t.delegated, own)} of ${own} left at ${t.delegated}`, t.grantId)
      if (others.length > 1) add("one sweep per grant", `${t.name}: ${others.length} sends from the delegated address that are no leg`, t.grantId)
      const sweptBack = others.reduce((s, r) => s + BigInt((r.payload as any)?.amount ?? 0), 0n)
      if (chain.indexer.balance(t.address, own) !== sweptBack) add("the sweep reaches the trader", `${t.name}: holds ${chain.indexer.balance(t.address, own)} of ${own}, sweep sent ${sweptBack}`, t.grantId)
      // No order matched after its grant ended.
      const late = trades.filter((tr) => Number(tr.time_ms) > t.expiresAtMs && (tr.buyer_user === String(t.userId) || tr.seller_user === String(t.userId)))
      for (const tr of late) add("no order matched after its grant's expiry", `trade ${tr.trade_id} at ${tr.time_ms} > expiry ${t.expiresAtMs} (${t.name})`, t.grantId)
    } else if (others.length > 0) add("no sweep of a live grant", `${t.name}: ${others.length} non-leg sends from a live grant`)
  }

  // Durable timers: every authorization's expiry fired once (above) and how late, inside and outside fault windows.
  const fired = await world.query<{ grant_id: string; due_ms: string; at_ms: string }>(
    `SELECT grant_id, (extract(epoch FROM due_at) * 1000)::bigint::text AS due_ms, (extract(epoch FROM at) * 1000)::bigint::text AS at_ms FROM authorization_events WHERE kind = 'expired' AND grant_id = ANY($1)`, [expiredGrants])
  const late = latenessSplit(fired.map((f) => ({ dueMs: Number(f.due_ms), firedMs: Number(f.at_ms) })), windows, runStartEpochMs)
  // What the refusals were (a definite answer is allowed; the summary shows why, e.g. a grant that ended).
  const refusals = new Map<string, number>()
  for (const e of history.entries) {
    if (e.outcome.kind === "answer" && e.outcome.status >= 400 && e.outcome.status < 500) {
      const b = e.outcome.body as any
      const k = `${e.op} ${b?.code ?? b?.error?.code ?? e.outcome.status}`
      refusals.set(k, (refusals.get(k) ?? 0) + 1)
    }
  }
  return {
    violations: v,
    counts: {
      refusals: [...refusals].map(([k, n]) => `${k}: ${n}`).join(", ") || "none",
      requests: history.entries.length,
      "orders acknowledged": acked.length,
      "orders stored": orders.length,
      trades: trades.length,
      legs: legs.length,
      "grants expired": expiredGrants.length,
      "5xx (all inside fault windows)": history.entries.filter(is5xx).length,
      "book samples": book.length,
      "expiry timer lateness outside faults, ms (p50/p99/max)": distribution(late.outside),
      "expiry timer lateness inside faults, ms (p50/p99/max)": distribution(late.inside)
    }
  }
}
