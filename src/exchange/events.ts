// What the matching core says happened. The book calls a sink with plain positional values so
// the hot path allocates nothing; `recordingSink` turns the calls into the objects below for the
// Market actor, the reference implementation and the tests. Every call that changes the book
// carries the per-market sequence number: strictly increasing by one per event, across all event
// kinds. A refusal (`rejected`) changes nothing and takes no number, so a client's errors (a
// cancel of an order already filled, a malformed place) never move the market's sequence.
//
// Prices are integer ticks and quantities integer lots (see units.ts); owners are wallet ids.

export type Side = "BUY" | "SELL"

/** NEW and PARTIALLY_FILLED are open (on the book); the rest are terminal. */
export type OrderStatus = "NEW" | "PARTIALLY_FILLED" | "FILLED" | "CANCELED" | "REJECTED" | "EXPIRED"

/** Why the book refused a place or a cancel. Filters reject earlier, with Binance's wording (filters.ts). */
export type RejectReason =
  | "DUPLICATE_ID" // an open order has this id
  | "INVALID_ID" // not a positive safe integer (place or cancel)
  | "INVALID_REF" // `ref` given but not a non-negative safe integer
  | "UNKNOWN_ORDER" // cancel: no open order has this id
  | "INVALID_OWNER" // empty owner
  | "INVALID_SIDE"
  | "INVALID_PRICE" // not a positive safe integer
  | "INVALID_QUANTITY" // not a positive safe integer, or above the book's qtyMax
  | "BOOK_FULL" // ordersMax open orders already rest
  | "LEVEL_FULL" // resting it could take its price level's total past 2^53 - 1 lots

/** The order entered the book's command stream; its `seq` is its time priority. */
export interface Accepted {
  readonly type: "accepted"
  readonly seq: number
  readonly id: number
  readonly owner: string
  readonly side: Side
  readonly price: number
  readonly qty: number
}

/** One fill, at the maker's price. `tradeId` counts trades of this market from 1. */
export interface Trade {
  readonly type: "trade"
  readonly seq: number
  readonly tradeId: number
  readonly makerId: number
  readonly takerId: number
  readonly makerOwner: string
  readonly takerOwner: string
  readonly price: number
  readonly qty: number
  readonly makerSide: Side
}

/**
 * An order's new status. `executedQty` is the cumulative filled quantity; `openQty` what still
 * rests on the book (0 for every terminal status). Never REJECTED: a refused request is a
 * `rejected` event, which names the request (`ref`), not an order.
 */
export interface StatusChange {
  readonly type: "status"
  readonly seq: number
  readonly id: number
  readonly status: OrderStatus
  readonly executedQty: number
  readonly openQty: number
  /** @deprecated never set: refusals are `rejected` events. Kept so existing readers compile. */
  readonly reason?: RejectReason
}

/**
 * The book refused a request (a place or a cancel) and changed nothing; it has no sequence
 * number. `ref` is the request's `ref` (NewOrder.ref, or cancel's second argument), null when the
 * caller gave none or an invalid one (0 is a ref like any other). It carries no order id: the id
 * may be a live order's (DUPLICATE_ID) or not a number at all.
 */
export interface Rejected {
  readonly type: "rejected"
  readonly ref: number | null
  readonly reason: RejectReason
}

/** A price level's new total open quantity (0: the level is gone), for depth updates. */
export interface LevelChange {
  readonly type: "level"
  readonly seq: number
  readonly side: Side
  readonly price: number
  readonly qty: number
}

export type BookEvent = Accepted | Trade | StatusChange | LevelChange | Rejected

/** Receives events as they happen, in sequence order. Implementations must not call back into the book. */
export interface BookSink {
  accepted(seq: number, id: number, owner: string, side: Side, price: number, qty: number): void
  trade(
    seq: number,
    tradeId: number,
    makerId: number,
    takerId: number,
    makerOwner: string,
    takerOwner: string,
    price: number,
    qty: number,
    makerSide: Side
  ): void
  /** `reason` is always undefined (refusals go to `rejected`); the parameter stays for existing sinks. */
  status(seq: number, id: number, status: OrderStatus, executedQty: number, openQty: number, reason: RejectReason | undefined): void
  level(seq: number, side: Side, price: number, qty: number): void
  /** Unnumbered: a refusal does not take a sequence number. `ref` null: the request gave none (or an invalid one). */
  rejected(ref: number | null, reason: RejectReason): void
}

/** A sink that ignores everything (for callers that only read the book). */
export const nullSink: BookSink = {
  accepted: () => {},
  trade: () => {},
  status: () => {},
  level: () => {},
  rejected: () => {}
}

/** A sink that appends event objects to `into`. */
export const recordingSink = (into: Array<BookEvent>): BookSink => ({
  accepted: (seq, id, owner, side, price, qty) => {
    into.push({ type: "accepted", seq, id, owner, side, price, qty })
  },
  trade: (seq, tradeId, makerId, takerId, makerOwner, takerOwner, price, qty, makerSide) => {
    into.push({ type: "trade", seq, tradeId, makerId, takerId, makerOwner, takerOwner, price, qty, makerSide })
  },
  status: (seq, id, status, executedQty, openQty, reason) => {
    into.push(
      reason === undefined
        ? { type: "status", seq, id, status, executedQty, openQty }
        : { type: "status", seq, id, status, executedQty, openQty, reason }
    )
  },
  level: (seq, side, price, qty) => {
    into.push({ type: "level", seq, side, price, qty })
  },
  rejected: (ref, reason) => {
    into.push({ type: "rejected", ref, reason })
  }
})
