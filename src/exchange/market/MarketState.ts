// What one market does with a batch of commands, without I/O: the Market entity (MarketEntity.ts)
// feeds it commands and the authorizations it read under lock, and writes what it returns in one
// transaction. It owns the book (book.ts), the open orders' bookkeeping (who, which grant, what is
// reserved, where a fill pays to), and turns the book's events into order updates, trades and
// settlement legs. Amounts are satoshis (bigint); prices and quantities ticks and lots.
import { type BookEvent, recordingSink, type Side } from "../events.ts"
import { OrderBook, defaultBookConfig } from "../book.ts"
import { checkOrder } from "../filters.ts"
import type { Market } from "../markets/marketSpec.ts"
import { globalId, localId } from "../markets/ids.ts"
import { baseUnits, formatSats, quoteUnits, reservationOf } from "./amounts.ts"

export type OpenStatus = "NEW" | "PARTIALLY_FILLED"
export type FinalStatus = "FILLED" | "CANCELED" | "EXPIRED"
export type Status = OpenStatus | FinalStatus

/** An order of this market as the entity tracks it; rows of `orders` have the same fields. */
export interface OrderRec {
  readonly orderId: number
  readonly userId: number
  readonly clientOrderId: string
  readonly side: Side
  readonly priceTicks: number
  readonly qtyLots: number
  executedLots: number
  quoteExecuted: bigint
  status: Status
  readonly seq: number
  readonly grantId: string
  /** The delegated address the order's spent asset leaves from. */
  readonly fromAddress: string
  /** The user's own address, where what the order buys arrives. */
  readonly payTo: string
  reserved: bigint
  readonly createdMs: number
  updatedMs: number
  /** Expiry of the funding grant: the order ends EXPIRED then (or a little before). */
  readonly expiresAtMs: number
}

/** A live authorization as read (and locked) for a batch, with its sums; `free*` shrink as orders reserve. */
export interface GrantView {
  readonly grantId: string
  readonly userId: number
  readonly asset: string
  readonly expiresAtMs: number
  readonly delegatedAddress: string
  /** cap − used − reserved, satoshis. */
  capFree: bigint
  /** On-chain balance at the delegated address − legs not yet in that balance − reserved, satoshis. */
  fundedFree: bigint
}

export interface TradeRec {
  readonly tradeId: number
  readonly priceTicks: number
  readonly qtyLots: number
  readonly quoteSats: bigint
  readonly makerOrderId: number
  readonly takerOrderId: number
  readonly buyerUser: number
  readonly sellerUser: number
  readonly buyerIsMaker: boolean
  readonly timeMs: number
}

export interface LegRec {
  readonly tradeId: number
  readonly leg: "base" | "quote"
  readonly asset: string
  readonly propertyId: number
  readonly amount: bigint
  readonly grantId: string
  readonly userId: number
  readonly from: string
  readonly to: string
}

/**
 * Why an order was refused. `unfunded` marks a refusal for the delegated address's on-chain
 * balance: the node's Omni view may be a block behind what a tool just told the user, so the
 * Market asks again once its view has caught up with the ledger (read your own writes).
 */
export type Refusal = { readonly code: number; readonly msg: string; readonly unfunded?: true }

export interface PlaceInput {
  readonly userId: number
  readonly clientOrderId: string
  readonly side: Side
  readonly price: string
  readonly quantity: string
}

/**
 * Is a place with a client order id already taken a retry of that order (same side, price and
 * quantity, in the market's units)? A retry is answered with the first order; anything else is
 * Binance's -2010 "Duplicate order sent." (it silently answered the earlier order before).
 */
export const isRetryOf = (m: Market, input: PlaceInput, rec: OrderRec): boolean => {
  if (input.side !== rec.side) return false
  const checked = checkOrder(m.compiled, input.price, input.quantity)
  return checked._tag === "Passed" && checked.price === rec.priceTicks && checked.qty === rec.qtyLots
}

export type PlaceOutcome =
  | { readonly _tag: "Refused"; readonly refusal: Refusal }
  | { readonly _tag: "Accepted"; readonly order: OrderRec; readonly trades: ReadonlyArray<TradeRec> }

export interface CancelInput {
  readonly userId: number
  readonly orderId?: number | undefined
  readonly clientOrderId?: string | undefined
  readonly onlyIf?: OpenStatus | undefined
}

export type CancelOutcome =
  | { readonly _tag: "Refused"; readonly refusal: Refusal }
  | { readonly _tag: "Canceled"; readonly order: OrderRec }

/** What a batch changed, for one transaction. */
export interface Changes {
  /** Orders accepted in this batch (their final state in it). */
  readonly inserted: Map<number, OrderRec>
  /** Orders accepted earlier whose state changed. */
  readonly updated: Map<number, OrderRec>
  readonly trades: Array<TradeRec>
  readonly legs: Array<LegRec>
  readonly users: Set<number>
}

export const newChanges = (): Changes => ({ inserted: new Map(), updated: new Map(), trades: [], legs: [], users: new Set() })

/** Orders stop matching this long before their grant expires, so no fill races the key's destruction. */
export const EXPIRY_MARGIN_MS = 1_000

const refused = (code: number, msg: string, unfunded?: true): PlaceOutcome =>
  ({ _tag: "Refused", refusal: unfunded === undefined ? { code, msg } : { code, msg, unfunded } })

export interface Counters {
  /** Last per-market order number and trade number handed out. */
  readonly lastOrder: number
  readonly lastTrade: number
  readonly lastSeq: number
}

export class MarketState {
  readonly book: OrderBook
  /** Open orders by global id. */
  readonly open = new Map<number, OrderRec>()
  /** Open orders by user and client order id. */
  private readonly byClientId = new Map<string, number>()
  /** Open order ids by grant. */
  private readonly byGrant = new Map<string, Set<number>>()
  private lastOrder: number

  /** The array the book's recording sink appends to; drained after every command. */
  private readonly sinkEvents: Array<BookEvent>

  private constructor(readonly market: Market, book: OrderBook, lastOrder: number, events: Array<BookEvent>) {
    this.book = book
    this.lastOrder = lastOrder
    this.sinkEvents = events
  }

  static create(market: Market, open: ReadonlyArray<OrderRec>, counters: Counters): MarketState | string {
    const events: Array<BookEvent> = []
    const config = { ...defaultBookConfig, qtyMax: market.compiled.maxQtyLots }
    const seq = Math.max(counters.lastSeq, ...open.map((o) => o.seq))
    const restored = OrderBook.restore(config, recordingSink(events), {
      seq,
      tradeId: counters.lastTrade,
      orders: open.map((o) => ({
        id: localId(o.orderId),
        owner: String(o.userId),
        side: o.side,
        price: o.priceTicks,
        qty: o.qtyLots,
        openQty: o.qtyLots - o.executedLots,
        seq: o.seq
      }))
    })
    if (restored._tag === "Invalid") return restored.reason
    events.length = 0 // the restore's own events, if any, are not news
    const state = new MarketState(market, restored.book, counters.lastOrder, events)
    for (const o of open) state.track(o)
    return state
  }

  private key(userId: number, clientOrderId: string) {
    return `${userId}\u0000${clientOrderId}`
  }

  private track(o: OrderRec) {
    this.open.set(o.orderId, o)
    this.byClientId.set(this.key(o.userId, o.clientOrderId), o.orderId)
    let set = this.byGrant.get(o.grantId)
    if (set === undefined) this.byGrant.set(o.grantId, (set = new Set()))
    set.add(o.orderId)
  }

  private untrack(o: OrderRec) {
    this.open.delete(o.orderId)
    this.byClientId.delete(this.key(o.userId, o.clientOrderId))
    const set = this.byGrant.get(o.grantId)
    set?.delete(o.orderId)
    if (set !== undefined && set.size === 0) this.byGrant.delete(o.grantId)
  }

  openByClientId(userId: number, clientOrderId: string): OrderRec | undefined {
    const id = this.byClientId.get(this.key(userId, clientOrderId))
    return id === undefined ? undefined : this.open.get(id)
  }

  /** Grants with open orders, and the earliest expiry among them. */
  grantsDue(nowMs: number): ReadonlyArray<string> {
    const due: Array<string> = []
    for (const [grantId, ids] of this.byGrant) {
      const first = this.open.get(ids.values().next().value!)
      if (first !== undefined && first.expiresAtMs - EXPIRY_MARGIN_MS <= nowMs) due.push(grantId)
    }
    return due
  }

  /** The asset an order of `side` spends, and the one it receives. */
  spentAsset(side: Side): { readonly asset: string; readonly propertyId: number } {
    return side === "SELL"
      ? { asset: this.market.base, propertyId: this.market.baseProperty }
      : { asset: this.market.quote, propertyId: this.market.quoteProperty }
  }

  /** Checks and places one order; `grant` is the live authorization of the spent asset (undefined: none). */
  place(input: PlaceInput, grant: GrantView | undefined, payTo: string | undefined, nowMs: number, changes: Changes): PlaceOutcome {
    const m = this.market
    if (m.status !== "TRADING") return refused(-2010, "Market is closed.")
    const checked = checkOrder(m.compiled, input.price, input.quantity)
    if (checked._tag === "Malformed") return refused(-1100, checked.message)
    if (checked._tag === "FilterFailure") return refused(-2010, checked.message)
    const { asset } = this.spentAsset(input.side)
    if (grant === undefined || grant.expiresAtMs - EXPIRY_MARGIN_MS <= nowMs) {
      return refused(-2010, `No live authorization for ${asset}: a ${input.side} on ${m.symbol} spends ${asset}, so the user must authorize it first.`)
    }
    if (payTo === undefined) return refused(-2010, "The account has no ledger address to receive the trade.")
    const spend = reservationOf(m.compiled, input.side, checked.price, checked.qty)
    if (spend > grant.capFree) {
      return refused(-2010, `Order exceeds the remaining cap of the ${asset} authorization: needs ${formatSats(spend)}, remaining ${formatSats(grant.capFree < 0n ? 0n : grant.capFree)}.`)
    }
    if (spend > grant.fundedFree) {
      return refused(-2010, `Order exceeds the funded balance of the ${asset} delegated address ${grant.delegatedAddress}: needs ${formatSats(spend)}, free ${formatSats(grant.fundedFree < 0n ? 0n : grant.fundedFree)}.`, true)
    }
    const n = this.lastOrder + 1
    const order: OrderRec = {
      orderId: globalId(m.id, n),
      userId: input.userId,
      clientOrderId: input.clientOrderId,
      side: input.side,
      priceTicks: checked.price,
      qtyLots: checked.qty,
      executedLots: 0,
      quoteExecuted: 0n,
      status: "NEW",
      seq: this.book.seq + 1,
      grantId: grant.grantId,
      fromAddress: grant.delegatedAddress,
      payTo,
      reserved: spend,
      createdMs: nowMs,
      updatedMs: nowMs,
      expiresAtMs: grant.expiresAtMs
    }
    const events = this.sinkEvents
    events.length = 0
    const status = this.book.place({ id: n, owner: String(input.userId), side: input.side, price: checked.price, qty: checked.qty })
    if (status === "REJECTED") {
      const reason = events.find((e) => e.type === "rejected")
      events.length = 0
      return refused(-2010, reason?.type === "rejected" && reason.reason === "BOOK_FULL" ? "The order book is full." : "Order rejected by the book.")
    }
    this.lastOrder = n
    grant.capFree -= spend
    grant.fundedFree -= spend
    changes.inserted.set(order.orderId, order)
    changes.users.add(order.userId)
    this.track(order)
    const trades = this.apply(order, nowMs, changes)
    return { _tag: "Accepted", order, trades }
  }

  /** Turns the book's events of the last command into order updates, trades and legs. */
  private apply(taker: OrderRec | undefined, nowMs: number, changes: Changes): Array<TradeRec> {
    const m = this.market
    const f = m.compiled
    const trades: Array<TradeRec> = []
    const events = this.sinkEvents
    for (const e of events) {
      if (e.type === "trade") {
        const maker = this.open.get(globalId(m.id, e.makerId))
        const takerRec = this.open.get(globalId(m.id, e.takerId)) ?? taker
        if (maker === undefined || takerRec === undefined) throw new Error(`trade ${e.tradeId} names an order the market does not track`)
        const buyer = maker.side === "BUY" ? maker : takerRec
        const seller = maker.side === "SELL" ? maker : takerRec
        const base = baseUnits(f, e.qty)
        const quote = quoteUnits(f, e.price, e.qty)
        const trade: TradeRec = {
          tradeId: globalId(m.id, e.tradeId),
          priceTicks: e.price,
          qtyLots: e.qty,
          quoteSats: quote,
          makerOrderId: maker.orderId,
          takerOrderId: takerRec.orderId,
          buyerUser: buyer.userId,
          sellerUser: seller.userId,
          buyerIsMaker: maker.side === "BUY",
          timeMs: nowMs
        }
        trades.push(trade)
        changes.trades.push(trade)
        changes.legs.push(
          { tradeId: trade.tradeId, leg: "base", asset: m.base, propertyId: m.baseProperty, amount: base, grantId: seller.grantId, userId: seller.userId, from: seller.fromAddress, to: buyer.payTo },
          { tradeId: trade.tradeId, leg: "quote", asset: m.quote, propertyId: m.quoteProperty, amount: quote, grantId: buyer.grantId, userId: buyer.userId, from: buyer.fromAddress, to: seller.payTo }
        )
        for (const o of [maker, takerRec]) {
          o.executedLots += e.qty
          o.quoteExecuted += quote
          o.reserved = reservationOf(f, o.side, o.priceTicks, o.qtyLots - o.executedLots)
          o.updatedMs = nowMs
          this.changed(o, changes)
        }
      } else if (e.type === "status" && e.status !== "REJECTED") { // the book never emits REJECTED as a status (refusals are `rejected` events); the guard narrows the type
        const o = this.open.get(globalId(m.id, e.id)) ?? (taker !== undefined && taker.orderId === globalId(m.id, e.id) ? taker : undefined)
        if (o === undefined) continue
        o.status = e.status
        o.updatedMs = nowMs
        if (e.status !== "NEW" && e.status !== "PARTIALLY_FILLED") {
          o.reserved = 0n
          this.untrack(o)
        }
        this.changed(o, changes)
      }
    }
    events.length = 0
    return trades
  }

  private changed(o: OrderRec, changes: Changes) {
    changes.users.add(o.userId)
    if (!changes.inserted.has(o.orderId)) changes.updated.set(o.orderId, o)
  }

  /** Cancels an open order (as CANCELED, or EXPIRED for an ended grant); undefined when it is not open. */
  end(orderId: number, as: "CANCELED" | "EXPIRED", nowMs: number, changes: Changes): OrderRec | undefined {
    const o = this.open.get(orderId)
    if (o === undefined) return undefined
    const events = this.sinkEvents
    events.length = 0
    if (!this.book.cancel(localId(orderId))) throw new Error(`order ${orderId} is tracked as open but the book does not have it`)
    events.length = 0
    o.status = as
    o.reserved = 0n
    o.updatedMs = nowMs
    this.untrack(o)
    this.changed(o, changes)
    return o
  }

  /**
   * A client's cancel: by order id or client order id, optionally only if the order is in
   * `onlyIf`. A refusal (unknown, filled or another user's order, or the restriction) never
   * reaches the book: no sequence number, nothing in `changes`, nothing to publish, so one
   * client's errors cannot grow what the market stores or sends everyone.
   */
  cancel(input: CancelInput, nowMs: number, changes: Changes): CancelOutcome {
    const target = input.orderId !== undefined
      ? this.open.get(input.orderId)
      : input.clientOrderId !== undefined ? this.openByClientId(input.userId, input.clientOrderId) : undefined
    // Another user's order is answered as unknown: existence is not disclosed.
    if (target === undefined || target.userId !== input.userId) return { _tag: "Refused", refusal: { code: -2011, msg: "Unknown order sent." } }
    if (input.onlyIf !== undefined && target.status !== input.onlyIf) {
      return { _tag: "Refused", refusal: { code: -2011, msg: "Order was not canceled due to cancel restrictions." } }
    }
    return { _tag: "Canceled", order: this.end(target.orderId, "CANCELED", nowMs, changes)! }
  }

  /** Every open order of a grant ends EXPIRED. */
  expireGrant(grantId: string, nowMs: number, changes: Changes): number {
    const ids = [...(this.byGrant.get(grantId) ?? [])]
    for (const id of ids) this.end(id, "EXPIRED", nowMs, changes)
    return ids.length
  }

  openOf(userId: number): ReadonlyArray<OrderRec> {
    return [...this.open.values()].filter((o) => o.userId === userId)
  }
}
