// Request weights from the spec's endpoint table. Paths are relative to /api/public/v1 (or /api/v3).
export interface RouteCost {
  readonly weight: number
  /** Signed routes are limited per API key; public ones per client IP. */
  readonly signed: boolean
}

const table: Record<string, RouteCost> = {
  "GET ": { weight: 1, signed: false },
  "GET /ping": { weight: 1, signed: false },
  "GET /time": { weight: 1, signed: false },
  "GET /exchangeInfo": { weight: 10, signed: false },
  "GET /depth": { weight: 5, signed: false },
  "GET /trades": { weight: 5, signed: false },
  "GET /klines": { weight: 5, signed: false },
  "GET /ticker/24hr": { weight: 5, signed: false },
  "GET /ticker/price": { weight: 2, signed: false },
  "GET /openapi.json": { weight: 1, signed: false },
  "GET /account": { weight: 10, signed: true },
  "GET /openOrders": { weight: 6, signed: true },
  "GET /allOrders": { weight: 10, signed: true },
  "GET /myTrades": { weight: 10, signed: true },
  // Not stated in the spec; Binance charges 4 for a query by id.
  "GET /order": { weight: 4, signed: true },
  "POST /order": { weight: 20, signed: true },
  "DELETE /order": { weight: 4, signed: true }
}

/** Whether a route is one of ours (bounds the label set of HTTP metrics). */
export const isKnownRoute = (method: string, subpath: string): boolean => `${method} ${subpath}` in table

/** Unknown routes still cost 1, so probing for paths is rate limited too. */
export const costOf = (method: string, subpath: string): RouteCost =>
  table[`${method} ${subpath}`] ?? { weight: 1, signed: false }
