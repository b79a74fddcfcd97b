// The limits and self-trade rule a book is built with; its own module so the snapshot codec can
// name it without importing the book.
export type StpMode = "EXPIRE_MAKER" | "EXPIRE_TAKER" | "EXPIRE_BOTH"

export interface BookConfig {
  readonly stp: StpMode
  /** Open orders the book holds at most; a place beyond it is REJECTED (BOOK_FULL). */
  readonly ordersMax: number
  /** Largest quantity of one order, in lots (the LOT_SIZE maxQty). */
  readonly qtyMax: number
}

export const defaultBookConfig: BookConfig = { stp: "EXPIRE_MAKER", ordersMax: 4_000_000, qtyMax: 1_000_000_000 }
