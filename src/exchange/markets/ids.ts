// Order and trade ids are global across markets (the spec's GET/DELETE /order take orderId
// alone), yet each Market entity hands out its own without asking anyone: the market's small id
// sits above 40 bits of per-market number. marketId ≤ 8000, so every id stays below 2^53 and is
// exact as a JS number, as a Postgres BIGINT and as a decimal string on the wire.
export const MARKET_SHIFT = 2 ** 40
export const MARKET_ID_MAX = 8000

/** The id of the `n`th order (or trade) of market `marketId`, n ≥ 1. */
export const globalId = (marketId: number, n: number): number => marketId * MARKET_SHIFT + n

/** The market an order or trade id belongs to; undefined for an id no market could have made. */
export const marketIdOf = (id: number): number | undefined => {
  if (!Number.isSafeInteger(id) || id <= 0) return undefined
  const m = Math.floor(id / MARKET_SHIFT)
  return m >= 1 && m <= MARKET_ID_MAX && id % MARKET_SHIFT > 0 ? m : undefined
}

/** The per-market number of a global id. */
export const localId = (id: number): number => id % MARKET_SHIFT

/** Parses an id from the wire ("123"); undefined unless it is a plain positive safe integer. */
export const parseId = (text: string): number | undefined => {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) return undefined
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : undefined
}
