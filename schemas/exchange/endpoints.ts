// Wire contracts of the exchange API (spec: exchange-api.md). Declared once; used for encoding,
// the OpenAPI document and typed clients. Every route is also answered under /api/v3 so unchanged
// Binance clients work (see src/platform/http/middleware.ts).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"

export const prefix = "/api/public/v1" as const

export const Empty = Schema.Struct({})

export const ServerTime = Schema.Struct({
  serverTime: Schema.Number.annotations({ description: "Unix milliseconds" })
})

export const IndexDocument = Schema.Struct({
  exchange: Schema.String,
  version: Schema.String,
  custody: Schema.Literal("non-custodial"),
  docs: Schema.String,
  openapi: Schema.String,
  public: Schema.Record({ key: Schema.String, value: Schema.String }),
  signed: Schema.Record({ key: Schema.String, value: Schema.String }),
  compat: Schema.Struct({ aggregator: Schema.String })
})

/** The signed parameters, documented here; they may also arrive in a form body (query wins). */
export const SignedParams = Schema.Struct({
  timestamp: Schema.optional(Schema.String).annotations({ description: "Unix milliseconds (or microseconds); required" }),
  recvWindow: Schema.optional(Schema.String).annotations({ description: "Milliseconds, default 5000, maximum 60000" }),
  signature: Schema.optional(Schema.String).annotations({
    description: "Lowercase hex HMAC-SHA256 of the query string without signature, followed by the raw body; required, last"
  })
})

export const Authorization = Schema.Struct({
  asset: Schema.String,
  cap: Schema.String.annotations({ description: "Decimal string" }),
  used: Schema.String.annotations({ description: "Decimal string" }),
  expiresAt: Schema.Number.annotations({ description: "Unix milliseconds" }),
  delegatedAddress: Schema.String
})

export const Account = Schema.Struct({
  uid: Schema.Number,
  accountType: Schema.Literal("SPOT"),
  custody: Schema.Literal("non-custodial"),
  canTrade: Schema.Boolean,
  canWithdraw: Schema.Boolean,
  canDeposit: Schema.Boolean,
  updateTime: Schema.Number,
  permissions: Schema.Array(Schema.String),
  scopes: Schema.Array(Schema.String),
  addresses: Schema.Array(Schema.Struct({ address: Schema.String, type: Schema.Literal("p2pkh", "p2sh") })),
  authorizations: Schema.Array(Authorization),
  /** Non-custodial: the exchange holds no balances. Kept (empty) for Binance clients that read it. */
  balances: Schema.Array(Schema.Struct({ asset: Schema.String, free: Schema.String, locked: Schema.String }))
})
export type Account = typeof Account.Type

export const PublicGroup = HttpApiGroup.make("public")
  .add(HttpApiEndpoint.get("index", prefix).addSuccess(IndexDocument)
    .annotate(OpenApi.Summary, "Index document: endpoints, docs and feeds"))
  .add(HttpApiEndpoint.get("ping", `${prefix}/ping`).addSuccess(Empty)
    .annotate(OpenApi.Summary, "Connectivity check (weight 1)"))
  .add(HttpApiEndpoint.get("time", `${prefix}/time`).addSuccess(ServerTime)
    .annotate(OpenApi.Summary, "Server time in unix milliseconds (weight 1)"))
  .annotate(OpenApi.Title, "Public")

export const AccountGroup = HttpApiGroup.make("account")
  .add(HttpApiEndpoint.get("account", `${prefix}/account`).setUrlParams(SignedParams).addSuccess(Account)
    .annotate(OpenApi.Summary, "Addresses and live trading authorizations (SIGNED, weight 10)"))
  .annotate(OpenApi.Title, "Account")

/** New order parameters (spec: Order request fields), documented; they may also arrive in a form body. */
export const NewOrderParams = Schema.Struct({
  symbol: Schema.optional(Schema.String),
  side: Schema.optional(Schema.String).annotations({ description: "BUY or SELL" }),
  type: Schema.optional(Schema.String).annotations({ description: "LIMIT (default)" }),
  timeInForce: Schema.optional(Schema.String).annotations({ description: "GTC (default)" }),
  price: Schema.optional(Schema.String),
  quantity: Schema.optional(Schema.String),
  newClientOrderId: Schema.optional(Schema.String),
  newOrderRespType: Schema.optional(Schema.String),
  ...SignedParams.fields
})

export const CancelOrderParams = Schema.Struct({
  symbol: Schema.optional(Schema.String),
  orderId: Schema.optional(Schema.String),
  origClientOrderId: Schema.optional(Schema.String),
  ...SignedParams.fields
})

/** An order as Binance reports it (RESULT shape); prices and quantities are decimal strings. */
export const Order = Schema.Struct({
  symbol: Schema.String,
  orderId: Schema.Number,
  orderListId: Schema.Number,
  clientOrderId: Schema.String,
  transactTime: Schema.Number,
  price: Schema.String,
  origQty: Schema.String,
  executedQty: Schema.String,
  cummulativeQuoteQty: Schema.String,
  status: Schema.String,
  timeInForce: Schema.String,
  type: Schema.String,
  side: Schema.String
})

export const OrderGroup = HttpApiGroup.make("order")
  .add(HttpApiEndpoint.post("newOrder", `${prefix}/order`).setUrlParams(NewOrderParams).addSuccess(Order)
    .annotate(OpenApi.Summary, "New LIMIT GTC order; matches and settles on-chain inline (SIGNED, trade scope, weight 20)"))
  .add(HttpApiEndpoint.del("cancelOrder", `${prefix}/order`).setUrlParams(CancelOrderParams).addSuccess(Order)
    .annotate(OpenApi.Summary, "Cancel an order (SIGNED, trade scope, weight 4)"))
  .annotate(OpenApi.Title, "Orders")
