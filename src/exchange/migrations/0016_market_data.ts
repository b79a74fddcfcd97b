import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Market data (docs/exchange.md, "Market data"): kline history, written by each market's owner
// after its batches (one row per market, interval and bucket; prices in ticks, volumes in lots and
// quote satoshis: exact integers), and the latest snapshot of each market's public data, which a
// node that missed a delta reads to catch up. Neither is read on a public request served from
// memory; kline history older than a node's memory is read from here in pages.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE market_klines (
    market_id INT NOT NULL REFERENCES markets(id),
    interval TEXT NOT NULL CHECK (interval IN ('1s','1m','3m','5m','15m','30m','1h','2h','4h','6h','8h','12h','1d','3d','1w','1M')),
    open_time BIGINT NOT NULL,
    open_ticks BIGINT NOT NULL,
    high_ticks BIGINT NOT NULL,
    low_ticks BIGINT NOT NULL,
    close_ticks BIGINT NOT NULL,
    volume_lots NUMERIC NOT NULL CHECK (volume_lots > 0),
    quote_sats NUMERIC NOT NULL,
    trades INT NOT NULL CHECK (trades > 0),
    first_trade_id BIGINT NOT NULL,
    last_trade_id BIGINT NOT NULL,
    PRIMARY KEY (market_id, interval, open_time)
  )`
  // The body is the JSON of src/exchange/marketdata/marketDataSql.ts (levels, recent trades), at `seq`.
  yield* sql`CREATE TABLE market_data_snapshots (
    market_id INT PRIMARY KEY REFERENCES markets(id),
    seq BIGINT NOT NULL,
    body TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
})
