// The exchange's side for people (issue 24): the shared wallet sign-in and session routes in the
// exchange's {code, msg} shape, and the routes the web app at /app/ is built on, open to any program
// holding a session token as well (no private back door): API keys, authorizations, orders.
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { sessionGroup, signInGroup } from "../common/signIn.ts"
import { text } from "../common/text.ts"
import { Weight } from "../common/Weight.ts"
import { BadRequest, Conflict, Forbidden, Gone, NotFound, ServiceUnavailable, Unauthorized } from "./errors.ts"
import { MyTrade, Order } from "./orders.ts"

export const exchangeSessionCookie = "sl_exchange_session"

/** The signed-in person: the wallet address and the exchange user it is registered to. */
export interface ExchangeSessionInfo {
  readonly service: string
  readonly address: string
  readonly expiresAt: Date
  readonly tokenHash: string
}

export class ExchangeSession extends Context.Tag("shardline/exchange/Session")<ExchangeSession, ExchangeSessionInfo>() {}

export class ExchangeSessionAuth extends HttpApiMiddleware.Tag<ExchangeSessionAuth>()("exchange/SessionAuth", {
  provides: ExchangeSession,
  failure: Schema.Union(Unauthorized, Forbidden, ServiceUnavailable),
  security: {
    bearer: HttpApiSecurity.bearer.pipe(HttpApiSecurity.annotate(OpenApi.Description, "The session token from POST /api/public/auth/wallet-exchange.")),
    cookie: HttpApiSecurity.apiKey({ in: "cookie", key: exchangeSessionCookie }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The same session token as the HttpOnly cookie wallet-exchange sets, for browsers.")
    )
  }
}) {}

export const ExchangeSignInGroup = signInGroup({ badRequest: BadRequest, unauthorized: Unauthorized, conflict: Conflict, gone: Gone, forbidden: Forbidden }, exchangeSessionCookie)
export const ExchangeSessionGroup = sessionGroup(ExchangeSessionAuth, NotFound)

const Scope = Schema.Literal("read", "trade")

export const NewKeyBody = Schema.Struct({
  scopes: Schema.Array(Scope).pipe(Schema.minItems(1), Schema.maxItems(2)),
  ipAllowlist: Schema.optional(Schema.Array(text(45)).pipe(Schema.maxItems(20))).annotations({ description: "IPv4/IPv6 addresses allowed to use the key; empty: any" }),
  label: Schema.optional(text(64))
})

export const KeyView = Schema.Struct({
  apiKey: Schema.String,
  scopes: Schema.Array(Scope),
  ipAllowlist: Schema.Array(Schema.String),
  label: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})
export const KeyList = Schema.Struct({ keys: Schema.Array(KeyView) })
export const KeyCreated = Schema.Struct({ ...KeyView.fields, secretKey: Schema.String.annotations({ description: "Shown once: it is never shown again" }) })
export const KeyRevoked = Schema.Struct({ apiKey: Schema.String, revoked: Schema.Literal(true) })

export const GrantBody = Schema.Struct({
  asset: text(16),
  cap: text(40).annotations({ description: "Decimal string in the asset's unit" }),
  expiresIn: text(16).annotations({ description: "A duration: 30s, 15m, 2h, 7d" })
})

export const AuthorizationView = Schema.Struct({
  asset: Schema.String,
  cap: Schema.String,
  used: Schema.String,
  reserved: Schema.String,
  remaining: Schema.String,
  expiresAt: Schema.Number,
  delegatedAddress: Schema.String.annotations({ description: "Send the asset here from your own wallet to fund the grant" }),
  funded: Schema.NullOr(Schema.String).annotations({ description: "What the delegated address holds on chain now (null: not known yet)" }),
  toSend: Schema.String.annotations({ description: "What is still worth sending from your own wallet: the cap less what trades spent and what the address holds (0: fully funded)" }),
  paymentUri: Schema.String.annotations({ description: "What the payment QR holds: the delegated address, the asset and toSend (no amount once fully funded)" })
})
export const AuthorizationList = Schema.Struct({ addresses: Schema.Array(Schema.String), authorizations: Schema.Array(AuthorizationView) })
export const AuthorizationEnded = Schema.Struct({ asset: Schema.String, grantId: Schema.NullOr(Schema.String) })

export const OrdersAndTrades = Schema.Struct({
  openOrders: Schema.Array(Order),
  trades: Schema.Array(MyTrade).annotations({ description: "The latest 50, each with its settlement legs (txids, confirmations)" })
})

const apiKeyParam = HttpApiSchema.param("apiKey", text(100))
const assetParam = HttpApiSchema.param("asset", text(16))

export const ExchangeAppGroup = HttpApiGroup.make("webApp")
  .add(HttpApiEndpoint.get("keys", "/api/app/keys").addSuccess(KeyList)
    .annotate(Weight, 2).annotate(OpenApi.Summary, "Your API keys (session, weight 2)"))
  .add(HttpApiEndpoint.post("createKey", "/api/app/keys").setPayload(NewKeyBody).addSuccess(KeyCreated, { status: 201 }).addError(BadRequest)
    .annotate(Weight, 5).annotate(OpenApi.Summary, "Create an API key: scopes read/trade, optional IP allowlist and label; the secret is shown once (session, weight 5)"))
  .add(HttpApiEndpoint.del("revokeKey")`/api/app/keys/${apiKeyParam}`.addSuccess(KeyRevoked).addError(NotFound)
    .annotate(Weight, 2).annotate(OpenApi.Summary, "Revoke one of your API keys, on every node (session, weight 2)"))
  .add(HttpApiEndpoint.get("authorizations", "/api/app/authorizations").addSuccess(AuthorizationList)
    .annotate(Weight, 2).annotate(OpenApi.Summary, "Your live authorizations with their delegated address and funded balance (session, weight 2)"))
  .add(HttpApiEndpoint.post("grant", "/api/app/authorizations").setPayload(GrantBody).addSuccess(AuthorizationView, { status: 201 }).addError(BadRequest)
    .annotate(Weight, 10).annotate(OpenApi.Summary, "Authorize an asset up to a cap until an expiry; fund it by paying the delegated address (session, weight 10)"))
  .add(HttpApiEndpoint.post("endAuthorization")`/api/app/authorizations/${assetParam}/end`.addSuccess(AuthorizationEnded).addError(NotFound)
    .annotate(Weight, 10).annotate(OpenApi.Summary, "End an authorization now: its orders end and what is left is swept back to your address (session, weight 10)"))
  .add(HttpApiEndpoint.get("activity", "/api/app/activity").addSuccess(OrdersAndTrades)
    .annotate(Weight, 5).annotate(OpenApi.Summary, "Your open orders and your latest trades with their settlement legs (session, weight 5)"))
  .middleware(ExchangeSessionAuth)
  .annotate(OpenApi.Title, "Web app")
