// Social wallet link v1 (spec: "Wallet-link envelope"): the consent manifest for a single-use
// token, with the exact message to sign (it holds the server-issued challenge), and the envelope.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, Conflict, Gone } from "../common/ErrorBody.ts"
import { text } from "../common/text.ts"
import { Weight } from "../common/Weight.ts"
import { Unauthorized } from "./errors.ts"

export const socialLinkType = "wl-link-xpubs" as const

export const SocialLinkManifest = Schema.Struct({
  version: Schema.Literal(1),
  type: Schema.Literal(socialLinkType),
  origin: Schema.String,
  challenge: Schema.String,
  identity_address: Schema.String.annotations({ description: "The account this link is for" }),
  xpub_path: Schema.String.annotations({ description: "The account path whose xpub is wanted: m/44'/696969'/1101'" }),
  message: Schema.String.annotations({ description: "The exact text to sign with identity_address's key (BIP-137, the ledger's prefix)" }),
  callback_url: Schema.String.annotations({ description: "Where to POST the envelope" }),
  expires_at: Schema.String,
  statement: Schema.String
})

export const SocialLinkEnvelope = Schema.Struct({
  version: Schema.Literal(1),
  type: Schema.Literal(socialLinkType),
  identity_address: text(100),
  xpub: text(200),
  xpub_path: text(40),
  signature: text(200),
  token: text(100)
})
export type SocialLinkEnvelope = typeof SocialLinkEnvelope.Type

export const SocialLinked = Schema.Struct({
  identity_address: Schema.String,
  xpub_path: Schema.String,
  first_posting_address: Schema.String.annotations({ description: "The first address posts will be stamped from: post 0 at xpub/0/0/0 (post i at xpub/i/0/0)" }),
  posting_path: Schema.String
})

export const SocialLinkGroup = HttpApiGroup.make("walletLink")
  .add(HttpApiEndpoint.get("manifest", "/api/public/v1/wallet-link").setUrlParams(Schema.Struct({ token: text(100) }))
    .addSuccess(SocialLinkManifest).addError(Gone)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "The consent manifest with the exact message, as JSON to wallets and programs (no Accept, */*, application/json); a browser (Accept preferring text/html) gets the page with its QR and deep link (single-use token, weight 1)"))
  .add(HttpApiEndpoint.post("link", "/api/public/v1/wallet-link").setPayload(SocialLinkEnvelope)
    .addSuccess(SocialLinked)
    .addError(Unauthorized).addError(Conflict).addError(Gone).addError(BadRequest)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Link the account's xpub: the envelope, signed over the manifest's message (single-use token, weight 5)"))
  .annotate(OpenApi.Title, "Wallet linking")
