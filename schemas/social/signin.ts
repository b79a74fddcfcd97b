// QR sign-in (spec: "Sign-in challenge", Authentication 2): wallet-challenge mints a challenge and
// its `wl-login` QR envelope, the browser polls wallet-status, the wallet fetches the exact message
// from wallet-callback and posts its signature there, the browser trades the one-time token at
// wallet-exchange for a session (a bearer token in the body, and an HttpOnly cookie).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, Conflict, Gone } from "../common/ErrorBody.ts"
import { text } from "../common/text.ts"
import { Weight } from "../common/Weight.ts"
import { Unauthorized } from "./errors.ts"


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
  token: Schema.String.annotations({ description: "The session's bearer token (also set as the HttpOnly cookie sl_session)" }),
  tokenType: Schema.Literal("Bearer"),
  address: Schema.String,
  expiresAt: Schema.String
})

export const SignInGroup = HttpApiGroup.make("signIn")
  .add(HttpApiEndpoint.post("challenge", "/api/public/auth/wallet-challenge").addSuccess(WalletChallenge)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Mint a sign-in challenge: the wl-login QR envelope and a deep link; sets the browser's sign-in cookie (weight 5)"))
  .add(HttpApiEndpoint.get("status", "/api/public/auth/wallet-status").setUrlParams(ChallengeId).addSuccess(WalletStatus)
    .addError(Gone)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "Poll a challenge every 2 s: pending, then signed with the one-time token (weight 1)"))
  .add(HttpApiEndpoint.get("callbackMessage", "/api/public/auth/wallet-callback").setUrlParams(ChallengeId).addSuccess(CallbackMessage)
    .addError(Gone)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "The exact message the wallet signs (weight 1)"))
  .add(HttpApiEndpoint.post("callback", "/api/public/auth/wallet-callback").setPayload(CallbackBody).addSuccess(CallbackAccepted)
    .addError(Unauthorized).addError(Conflict).addError(Gone).addError(BadRequest)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "The wallet's signature over the message: once per challenge (weight 5)"))
  .add(HttpApiEndpoint.post("exchange", "/api/public/auth/wallet-exchange").setPayload(ExchangeBody).addSuccess(SessionIssued)
    .addError(Gone).addError(BadRequest)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Trade the one-time token for a session: a bearer token and the sl_session cookie (once, weight 5)"))
  .annotate(OpenApi.Title, "Sign-in")
