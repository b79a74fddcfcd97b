// The token desk's side for people (issue 24): the shared wallet sign-in and session routes in the
// desk's {error: {code, message}} shape, and the routes the web app at /app/ is built on, open to
// any program holding a session token as well (no private back door): the member's account and
// saved payout address, partner keys, the wallet-link QR and its live state, the linked wallet's
// rewards with their hourly samples, and the member's orders with their history and txids. An
// account is a wallet address: the member whose wallet is linked with that signing address, else
// the member that address signed in as (a new one the first time).
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { sessionGroup, signInGroup } from "../common/signIn.ts"
import { text } from "../common/text.ts"
import { linkQrOf, linkStateOf } from "../common/walletLinkQr.ts"
import { Weight } from "../common/Weight.ts"
import { CashoutAccount, CashoutOrder, PayoutAddressBody } from "./cashout.ts"
import { BadRequest, Conflict, Forbidden, Gone, NotFound, ServiceUnavailable, Unauthorized } from "./errors.ts"
import { deskScopes } from "./security.ts"
import { RewardsBalance, rewardsDaysMax } from "./walletLink.ts"

export const deskSessionCookie = "sl_desk_session"

/** The signed-in person: the wallet address the session was made for. */
export interface DeskSessionInfo {
  readonly service: string
  readonly address: string
  readonly expiresAt: Date
  readonly tokenHash: string
}

export class DeskSession extends Context.Tag("shardline/desk/Session")<DeskSession, DeskSessionInfo>() {}

export class DeskSessionAuth extends HttpApiMiddleware.Tag<DeskSessionAuth>()("desk/SessionAuth", {
  provides: DeskSession,
  failure: Schema.Union(Unauthorized, Forbidden, ServiceUnavailable),
  security: {
    // Named apart from the partner key's `bearer` scheme: the same header, another credential.
    session: HttpApiSecurity.bearer.pipe(HttpApiSecurity.annotate(OpenApi.Description, "The session token from POST /api/public/auth/wallet-exchange, as Authorization: Bearer <session token>.")),
    cookie: HttpApiSecurity.apiKey({ in: "cookie", key: deskSessionCookie }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The same session token as the HttpOnly cookie wallet-exchange sets, for browsers.")
    )
  }
}) {}

export const DeskSignInGroup = signInGroup({ badRequest: BadRequest, unauthorized: Unauthorized, conflict: Conflict, gone: Gone, forbidden: Forbidden }, deskSessionCookie)
export const DeskSessionGroup = sessionGroup(DeskSessionAuth, NotFound)

export const LinkedWalletView = Schema.Struct({
  signingAddress: Schema.String.annotations({ description: "The key at m/44'/696969'/0'/0/0: also the token payout address" }),
  evmAddress: Schema.String.annotations({ description: "The USDC payout address linking filled" }),
  baseAddress: Schema.String,
  wallet: Schema.String.annotations({ description: "The wallet app's label" }),
  linkedAt: Schema.String
})

export const AppAccount = Schema.Struct({
  memberId: Schema.String,
  address: Schema.String.annotations({ description: "The wallet address this session signed in with" }),
  wallet: Schema.NullOr(LinkedWalletView).annotations({ description: "The linked wallet; null until one is linked by its QR" }),
  payout: CashoutAccount
})

const Scope = Schema.Literal(...deskScopes)

export const AppKey = Schema.Struct({
  id: Schema.String.annotations({ description: "The key's id (not the key): revoke it with DELETE /api/app/keys/{id}" }),
  scopes: Schema.Array(Scope),
  callbackUrl: Schema.NullOr(Schema.String),
  feeBps: Schema.Number.annotations({ description: "The redemption fee orders made with this key pay (the member's negotiated fee, else the desk's), basis points" }),
  createdAt: Schema.String
})
export const AppKeyList = Schema.Struct({ keys: Schema.Array(AppKey) })
export const NewAppKey = Schema.Struct({
  scopes: Schema.Array(Scope).pipe(Schema.minItems(1), Schema.maxItems(deskScopes.length)),
  callbackUrl: Schema.optional(text(2048)).annotations({ description: "https URL where order milestones are POSTed, signed with the key's signing secret" })
})
export const AppKeyCreated = Schema.Struct({
  ...AppKey.fields,
  apiKey: Schema.String.annotations({ description: "Shown once: it is never shown again" }),
  signingSecret: Schema.String.annotations({ description: "Verifies this key's callbacks (x-svc-signature); shown once" })
})
export const AppKeyRevoked = Schema.Struct({ id: Schema.String, revoked: Schema.Literal(true) })

export const NewLinkQr = Schema.Struct({
  replace: Schema.optional(Schema.Boolean).annotations({ description: "Allow a wallet other than the linked one to replace it" })
})
export const LinkQr = linkQrOf("/api/app/wallet-link/{challengeId}", { allowRebind: Schema.Boolean })
export const LinkState = linkStateOf("a wallet linked with it", {
  wallet: Schema.NullOr(LinkedWalletView).annotations({ description: "Once linked: the wallet" })
})

export const RewardsSample = Schema.Struct({
  at: Schema.String.annotations({ description: "The sampling slot, ISO 8601" }),
  balance: Schema.NullOr(Schema.String).annotations({ description: "Total balance of the reward tokens then, decimal; null: the slot was missed" })
})
export const AppRewards = Schema.Struct({
  ...RewardsBalance.fields,
  intervalMs: Schema.Int.annotations({ description: "The sampling interval (hourly unless configured)" }),
  samples: Schema.Array(RewardsSample).annotations({ description: "Every slot in the window, oldest first" })
})
export const AppRewardsQuery = Schema.Struct({
  days: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, rewardsDaysMax)), { default: () => 30 })
})

export const OrderHistoryItem = Schema.Struct({
  at: Schema.String,
  event: Schema.String.annotations({ description: "created, a milestone (deposit_seen, deposit_confirmed, burned, payout_sent, refund_sent, expired, failed) or a partner webhook's event" }),
  source: Schema.String.annotations({ description: "desk, or the partner whose webhook reported it" }),
  status: Schema.NullOr(Schema.String),
  txid: Schema.NullOr(Schema.String)
})
export const OrderLegView = Schema.Struct({
  leg: Schema.String.annotations({ description: "sweep, burn, payout, refund, refund_gas…" }),
  chain: Schema.String,
  txid: Schema.String,
  recordedAt: Schema.String
})
export const AppOrder = Schema.Struct({
  ...CashoutOrder.fields,
  history: Schema.Array(OrderHistoryItem).annotations({ description: "Oldest first" }),
  legs: Schema.Array(OrderLegView).annotations({ description: "Every transaction the desk signed for the order" })
})
export const AppOrderList = Schema.Struct({ orders: Schema.Array(AppOrder).annotations({ description: "The member's latest 50, newest first, across its keys" }) })

const keyIdParam = HttpApiSchema.param("id", text(64))
const challengeParam = HttpApiSchema.param("challengeId", text(64))

export const DeskAppGroup = HttpApiGroup.make("webApp")
  .add(HttpApiEndpoint.get("account", "/api/app/account").addSuccess(AppAccount)
    .annotate(Weight, 2).annotate(OpenApi.Summary, "Your member account: the linked wallet, deposit and payout addresses, fee (session, weight 2)"))
  .add(HttpApiEndpoint.post("savePayoutAddress", "/api/app/payout-address").setPayload(PayoutAddressBody).addSuccess(CashoutAccount).addError(BadRequest)
    .annotate(Weight, 2).annotate(OpenApi.Summary, "Save your USDC payout address, used when an order names none (session, weight 2)"))
  .add(HttpApiEndpoint.get("keys", "/api/app/keys").addSuccess(AppKeyList)
    .annotate(Weight, 2).annotate(OpenApi.Summary, "Your live partner keys (session, weight 2)"))
  .add(HttpApiEndpoint.post("createKey", "/api/app/keys").setPayload(NewAppKey).addSuccess(AppKeyCreated, { status: 201 }).addError(BadRequest)
    .annotate(Weight, 5).annotate(OpenApi.Summary, "Create a partner key with scopes and a callback URL; the key and its signing secret are shown once (session, weight 5)"))
  .add(HttpApiEndpoint.del("revokeKey")`/api/app/keys/${keyIdParam}`.addSuccess(AppKeyRevoked).addError(NotFound)
    .annotate(Weight, 2).annotate(OpenApi.Summary, "Revoke one of your partner keys, on every node (session, weight 2)"))
  .add(HttpApiEndpoint.post("linkQr", "/api/app/wallet-link").setPayload(NewLinkQr).addSuccess(LinkQr, { status: 201 })
    .annotate(Weight, 5).annotate(OpenApi.Summary, "A single-use wallet-link QR for your account, valid 5 minutes (session, weight 5)"))
  .add(HttpApiEndpoint.get("linkState")`/api/app/wallet-link/${challengeParam}`.addSuccess(LinkState).addError(NotFound)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "The live state of one of your wallet-link QRs; poll every 2 s (session, weight 1)"))
  .add(HttpApiEndpoint.get("rewards", "/api/app/rewards").setUrlParams(AppRewardsQuery).addSuccess(AppRewards).addError(NotFound)
    .annotate(Weight, 2).annotate(OpenApi.Summary, "The linked wallet's rewards: current balance, the window's average and every hourly sample (session, weight 2)"))
  .add(HttpApiEndpoint.get("orders", "/api/app/orders").addSuccess(AppOrderList)
    .annotate(Weight, 5).annotate(OpenApi.Summary, "Your latest orders across your keys, each with its status history and every txid (session, weight 5)"))
  .middleware(DeskSessionAuth)
  .annotate(OpenApi.Title, "Web app")
