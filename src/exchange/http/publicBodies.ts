// The public exchange answers as pure functions: the Effect handlers and the edge's fast lane
// both call these, so the two paths cannot drift apart.
import { cmcPrefix, coingeckoPrefix } from "../../../schemas/exchange/marketData.ts"
import { prefix, type ExchangeInfo } from "../../../schemas/exchange/public.ts"
import type { Market } from "../markets/marketSpec.ts"
import { ASSET_DECIMALS } from "../markets/marketSpec.ts"

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
    exchangeInfo: `${prefix}/exchangeInfo`,
    depth: `${prefix}/depth?symbol=SHRDDUSD&limit=100`,
    trades: `${prefix}/trades?symbol=SHRDDUSD&limit=500`,
    aggTrades: `${prefix}/aggTrades?symbol=SHRDDUSD&limit=500`,
    klines: `${prefix}/klines?symbol=SHRDDUSD&interval=1m&limit=500`,
    ticker24hr: `${prefix}/ticker/24hr?symbol=SHRDDUSD`,
    tickerPrice: `${prefix}/ticker/price?symbols=["SHRDDUSD","GOLDDUSD"]`,
    bookTicker: `${prefix}/ticker/bookTicker?symbol=SHRDDUSD`,
    avgPrice: `${prefix}/avgPrice?symbol=SHRDDUSD`,
    stream: `${prefix}/stream?symbol=SHRDDUSD&streams=ticker,depth,trade`
  },
  signed: {
    account: `GET ${prefix}/account?timestamp=<ms>&recvWindow=5000&signature=<hex>`,
    newOrder: `POST ${prefix}/order?symbol=<BASEQUOTE>&side=BUY&type=LIMIT&timeInForce=GTC&price=<dec>&quantity=<dec>&timestamp=<ms>&signature=<hex>`,
    cancelOrder: `DELETE ${prefix}/order?symbol=<BASEQUOTE>&orderId=<id>&timestamp=<ms>&signature=<hex>`,
    cancelOpenOrders: `DELETE ${prefix}/openOrders?symbol=<BASEQUOTE>&timestamp=<ms>&signature=<hex>`,
    getOrder: `GET ${prefix}/order?symbol=<BASEQUOTE>&orderId=<id>&timestamp=<ms>&signature=<hex>`,
    openOrders: `GET ${prefix}/openOrders?symbol=<BASEQUOTE>&timestamp=<ms>&signature=<hex>`,
    allOrders: `GET ${prefix}/allOrders?symbol=<BASEQUOTE>&limit=500&timestamp=<ms>&signature=<hex>`,
    myTrades: `GET ${prefix}/myTrades?symbol=<BASEQUOTE>&limit=500&timestamp=<ms>&signature=<hex>`
  },
  // The spec's one aggregator feed is CoinGecko's tickers; both aggregators' full sets follow.
  compat: {
    aggregator: `${coingeckoPrefix}/tickers`,
    coingecko: {
      pairs: `${coingeckoPrefix}/pairs`,
      tickers: `${coingeckoPrefix}/tickers`,
      orderbook: `${coingeckoPrefix}/orderbook?ticker_id=SHRD_DUSD&depth=100`,
      historical_trades: `${coingeckoPrefix}/historical_trades?ticker_id=SHRD_DUSD&limit=500`
    },
    coinmarketcap: {
      summary: `${cmcPrefix}/summary`,
      ticker: `${cmcPrefix}/ticker`,
      orderbook: `${cmcPrefix}/orderbook/SHRD_DUSD?depth=100&level=2`,
      trades: `${cmcPrefix}/trades/SHRD_DUSD`
    }
  }
}

export const ping = () => ({})

export const serverTime = () => ({ serverTime: Date.now() })

/** Both budgets are listed: signed calls count against the key and the client IP, public ones against the IP. */
/** A market as exchangeInfo lists it: Binance's fields, its four filters, LIMIT GTC only, STP EXPIRE_MAKER. */
export const symbolInfo = (m: Market): ExchangeInfo["symbols"][number] => {
  const f = m.filters
  return {
    symbol: m.symbol,
    status: m.status,
    baseAsset: m.base,
    baseAssetPrecision: ASSET_DECIMALS,
    quoteAsset: m.quote,
    quotePrecision: ASSET_DECIMALS,
    quoteAssetPrecision: ASSET_DECIMALS,
    baseCommissionPrecision: ASSET_DECIMALS,
    quoteCommissionPrecision: ASSET_DECIMALS,
    orderTypes: ["LIMIT"],
    icebergAllowed: false,
    ocoAllowed: false,
    otoAllowed: false,
    quoteOrderQtyMarketAllowed: false,
    allowTrailingStop: false,
    cancelReplaceAllowed: false,
    isSpotTradingAllowed: true,
    isMarginTradingAllowed: false,
    filters: [
      { filterType: "PRICE_FILTER", minPrice: f.minPrice, maxPrice: f.maxPrice, tickSize: f.tickSize },
      { filterType: "LOT_SIZE", minQty: f.minQty, maxQty: f.maxQty, stepSize: f.stepSize },
      { filterType: "MIN_NOTIONAL", minNotional: f.minNotional, applyToMarket: false, avgPriceMins: 5 },
      { filterType: "NOTIONAL", minNotional: f.minNotional, applyMinToMarket: false, maxNotional: f.maxNotional === "0" ? "9000000000.00000000" : f.maxNotional, applyMaxToMarket: false, avgPriceMins: 5 }
    ],
    permissions: [],
    permissionSets: [["SPOT"]],
    defaultSelfTradePreventionMode: "EXPIRE_MAKER",
    allowedSelfTradePreventionModes: ["EXPIRE_MAKER"]
  }
}

export const exchangeInfo = (limits: { readonly keyWeightPerMin: number; readonly ipWeightPerMin: number }, markets: ReadonlyArray<Market>): ExchangeInfo => ({
  timezone: "UTC",
  serverTime: Date.now(),
  rateLimits: [
    { rateLimitType: "REQUEST_WEIGHT", interval: "MINUTE", intervalNum: 1, limit: limits.ipWeightPerMin, scope: "IP" },
    { rateLimitType: "REQUEST_WEIGHT", interval: "MINUTE", intervalNum: 1, limit: limits.keyWeightPerMin, scope: "KEY" }
  ],
  exchangeFilters: [],
  symbols: markets.map(symbolInfo)
})
