// Wallet sign-in, the same on every listener (spec: social "Sign-in challenge"; INTERFACES.md
// "Added in this round"): wallet-challenge mints a challenge and its `wl-login` QR envelope, the
// browser polls wallet-status, the wallet fetches the exact message from wallet-callback and posts
// its signature there, the browser trades the one-time token at wallet-exchange for a session (a
// bearer token in the body and an HttpOnly cookie). Then the session routes: who am I, sign out,
// the list of my sessions and ending one. Each service builds the group with its own error classes
// (`signInGroup`, `sessionGroup`); the SignInChallenge entity is one for all three.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, OpenApi } from "@effect/platform"
import { Rpc } from "@effect/rpc"
import { type Context, DateTime, PrimaryKey, Schema } from "effect"
import { LinkRefused } from "./linkToken.ts"
import { text } from "./text.ts"
import { Weight } from "./Weight.ts"

export const loginType = "wl-login" as const

export const LoginEnvelope = Schema.Struct({
  version: Schema.Literal(1),
  type: Schema.Literal(loginType),
  origin: Schema.String,
  id: Schema.String.annotations({ description: "The challenge id" }),
  nonce: Schema.String,
  callback: Schema.String.annotations({ description: "GET it for the exact message; POST {id, address, signature} to it" }),
  expiry: Schema.Int.annotations({ description: "Unix seconds, 5 minutes after minting" }),
  chain: Schema.String,
  statement: Schema.String.annotations({ description: "No payment is involved" })
})
export type LoginEnvelope = typeof LoginEnvelope.Type

export const WalletChallenge = Schema.Struct({
  id: Schema.String,
  qr: LoginEnvelope.annotations({ description: "What the QR code holds (as JSON text)" }),
  deepLink: Schema.String.annotations({ description: "shardline-wallet://login?envelope=<base64url JSON>: for a wallet on the same device" }),
  expiresAt: Schema.String,
  pollIntervalMs: Schema.Int
})

export const ChallengeId = Schema.Struct({ id: text(64) })

export const WalletStatus = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("pending", "signed", "used", "expired"),
  token: Schema.optional(Schema.String).annotations({
    description: "Once signed, to the browser that minted the challenge (its sign-in cookie): the one-time token for wallet-exchange"
  }),
  address: Schema.optional(Schema.String),
  expiresAt: Schema.String
})

export const CallbackMessage = Schema.Struct({
  id: Schema.String,
  message: Schema.String.annotations({ description: "The exact text to sign (BIP-137, the ledger's message prefix)" }),
  expiresAt: Schema.String
})

export const CallbackBody = Schema.Struct({
  id: text(64),
  address: text(100),
  signature: text(200)
})

export const CallbackAccepted = Schema.Struct({ id: Schema.String, status: Schema.Literal("signed"), address: Schema.String })

export const ExchangeBody = Schema.Struct({ token: text(200) })

export const SessionIssued = Schema.Struct({
  token: Schema.String.annotations({ description: "The session's bearer token (also set as this service's HttpOnly session cookie)" }),
  tokenType: Schema.Literal("Bearer"),
  address: Schema.String,
  expiresAt: Schema.String
})

/** The error classes of one service that the sign-in routes answer with. */
export interface SignInErrors {
  readonly badRequest: Schema.Schema<any, any, never>
  readonly unauthorized: Schema.Schema<any, any, never>
  readonly conflict: Schema.Schema<any, any, never>
  readonly gone: Schema.Schema<any, any, never>
  /** wallet-exchange from another site's page (login CSRF): the service's cross_site_refused. */
  readonly forbidden: Schema.Schema<any, any, never>
}

/** The four sign-in paths, the same on every listener; `cookie` names the service's session cookie. */
export const signInGroup = <E extends SignInErrors>(errors: E, cookie: string) =>
  HttpApiGroup.make("signIn")
    .add(HttpApiEndpoint.post("challenge", "/api/public/auth/wallet-challenge").addSuccess(WalletChallenge)
      .annotate(Weight, 5)
      .annotate(OpenApi.Summary, "Mint a sign-in challenge: the wl-login QR envelope and a deep link; sets the browser's sign-in cookie (weight 5)"))
    .add(HttpApiEndpoint.get("status", "/api/public/auth/wallet-status").setUrlParams(ChallengeId).addSuccess(WalletStatus)
      .addError(errors.gone as E["gone"])
      .annotate(Weight, 1)
      .annotate(OpenApi.Summary, "Poll a challenge every 2 s: pending, then signed with the one-time token (weight 1)"))
    .add(HttpApiEndpoint.get("callbackMessage", "/api/public/auth/wallet-callback").setUrlParams(ChallengeId).addSuccess(CallbackMessage)
      .addError(errors.gone as E["gone"])
      .annotate(Weight, 1)
      .annotate(OpenApi.Summary, "The exact message the wallet signs (weight 1)"))
    .add(HttpApiEndpoint.post("callback", "/api/public/auth/wallet-callback").setPayload(CallbackBody).addSuccess(CallbackAccepted)
      .addError(errors.unauthorized as E["unauthorized"]).addError(errors.conflict as E["conflict"]).addError(errors.gone as E["gone"])
      .addError(errors.badRequest as E["badRequest"])
      .annotate(Weight, 5)
      .annotate(OpenApi.Summary, "The wallet's signature over the message: once per challenge (weight 5)"))
    .add(HttpApiEndpoint.post("exchange", "/api/public/auth/wallet-exchange").setPayload(ExchangeBody).addSuccess(SessionIssued)
      .addError(errors.gone as E["gone"]).addError(errors.badRequest as E["badRequest"]).addError(errors.forbidden as E["forbidden"])
      .annotate(Weight, 5)
      .annotate(OpenApi.Summary, `Trade the one-time token for a session: a bearer token and the ${cookie} cookie (once, weight 5). A JSON body only; 403 when the browser says another site sent it (login CSRF)`))
    .annotate(OpenApi.Title, "Sign-in")

// ---- Sessions (issue 27.10): who am I, sign out, my sessions and ending one.

export const SessionView = Schema.Struct({
  address: Schema.String,
  expiresAt: Schema.String.annotations({ description: "ISO 8601" }),
  csrfToken: Schema.String.annotations({
    description: "For browsers on the cookie session: send it as X-CSRF-Token on state changes (JSON same-origin requests pass without it)"
  })
})
export type SessionView = typeof SessionView.Type

export const SessionListItem = Schema.Struct({
  id: Schema.String.annotations({ description: "The session's id (not its token): end it with DELETE /api/public/v1/sessions/{id}" }),
  createdAt: Schema.String,
  expiresAt: Schema.String,
  current: Schema.Boolean.annotations({ description: "The session this request came with" })
})
export const SessionList = Schema.Struct({ sessions: Schema.Array(SessionListItem) })
export const SessionEnded = Schema.Struct({ id: Schema.String, ended: Schema.Boolean })
export const SessionIdParam = HttpApiSchema.param("id", text(64))

/** The session routes of a service, behind its session middleware. */
export const sessionGroup = <I extends HttpApiMiddleware.HttpApiMiddleware.AnyId, S, NF extends Schema.Schema<any, any, never>>(middleware: Context.Tag<I, S>, notFound: NF) =>
  HttpApiGroup.make("session")
    .add(HttpApiEndpoint.get("session", "/api/public/v1/session").addSuccess(SessionView)
      .annotate(Weight, 1)
      .annotate(OpenApi.Summary, "The signed-in address, when the session ends, and its CSRF token (session, weight 1)"))
    .add(HttpApiEndpoint.post("signOut", "/api/public/auth/sign-out").addSuccess(SessionEnded)
      .annotate(Weight, 1)
      .annotate(OpenApi.Summary, "End this session on every node and clear its cookie (session, weight 1)"))
    .add(HttpApiEndpoint.get("sessions", "/api/public/v1/sessions").addSuccess(SessionList)
      .annotate(Weight, 2)
      .annotate(OpenApi.Summary, "This address's live sessions on this service (session, weight 2)"))
    .add(HttpApiEndpoint.del("endSession")`/api/public/v1/sessions/${SessionIdParam}`.addSuccess(SessionEnded).addError(notFound)
      .annotate(Weight, 1)
      .annotate(OpenApi.Summary, "End one of this address's sessions, on every node (session, weight 1)"))
    .middleware(middleware)
    .annotate(OpenApi.Title, "Session")

// ---- The SignInChallenge entity (entity id: the challenge id), shared by every listener.

export class MintChallenge extends Schema.Class<MintChallenge>("SignInChallenge/Mint")({
  /** The service whose session the challenge ends in: "exchange", "desk", "social". */
  service: Schema.optionalWith(Schema.String, { default: () => "social" }),
  nonce: Schema.String,
  origin: Schema.String,
  browserHash: Schema.String,
  issuedAtMs: Schema.Number,
  expiresAtMs: Schema.Number
}) {}

export class ExpireChallenge extends Schema.Class<ExpireChallenge>("SignInChallenge/Expire")({
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return "expire"
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}

export class SignedCallback extends Schema.Class<SignedCallback>("SignInChallenge/Callback")({
  address: Schema.String,
  signature: Schema.String
}) {}

export class PollStatus extends Schema.Class<PollStatus>("SignInChallenge/Status")({
  /** SHA-256 of the poller's sign-in cookie, if it sent one: only the minting browser gets the token. */
  browserHash: Schema.NullOr(Schema.String)
}) {}

export class ExchangeToken extends Schema.Class<ExchangeToken>("SignInChallenge/Exchange")({
  tokenHash: Schema.String
}) {}

export const SignInChallenge = Entity.make("SignInChallenge", [
  Rpc.make("Mint", { payload: MintChallenge, error: LinkRefused }),
  Rpc.make("Expire", { payload: ExpireChallenge }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Callback", { payload: SignedCallback, success: CallbackAccepted, error: LinkRefused }),
  Rpc.make("Status", { payload: PollStatus, success: WalletStatus, error: LinkRefused }),
  Rpc.make("Exchange", { payload: ExchangeToken, success: SessionIssued, error: LinkRefused })
])
