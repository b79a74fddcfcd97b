// The public exchange answers as pure functions: the Effect handlers and the edge's fast lane
// both call these, so the two paths cannot drift apart.
import { prefix, type ExchangeInfo } from "../../../schemas/exchange/public.ts"

/** The index document: where everything is. Sample query strings show the parameters. */
export const indexDocument = {
  exchange: "Shardline",
  version: "1.0.0",
  custody: "non-custodial" as const,
  docs: "/api-docs",
  openapi: `${prefix}/openapi.json`,
  public: {
    ping: `${prefix}/ping`,
    time: `${prefix}/time`,
    exchangeInfo: `${prefix}/exchangeInfo`
  },
  signed: {
    account: `GET ${prefix}/account?timestamp=<ms>&recvWindow=5000&signature=<hex>`,
    newOrder: `POST ${prefix}/order?symbol=<BASEQUOTE>&side=BUY&type=LIMIT&timeInForce=GTC&price=<dec>&quantity=<dec>&timestamp=<ms>&signature=<hex>`,
    cancelOrder: `DELETE ${prefix}/order?symbol=<BASEQUOTE>&orderId=<id>&timestamp=<ms>&signature=<hex>`
  },
  compat: { aggregator: "/api/public/aggregator" }
}

export const ping = () => ({})

export const serverTime = () => ({ serverTime: Date.now() })

/** Both budgets are listed: signed calls count against the key and the client IP, public ones against the IP. */
export const exchangeInfo = (limits: { readonly keyWeightPerMin: number; readonly ipWeightPerMin: number }): ExchangeInfo => ({
  timezone: "UTC",
  serverTime: Date.now(),
  rateLimits: [
    { rateLimitType: "REQUEST_WEIGHT", interval: "MINUTE", intervalNum: 1, limit: limits.ipWeightPerMin, scope: "IP" },
    { rateLimitType: "REQUEST_WEIGHT", interval: "MINUTE", intervalNum: 1, limit: limits.keyWeightPerMin, scope: "KEY" }
  ],
  exchangeFilters: [],
  symbols: []
})
