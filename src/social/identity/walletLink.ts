// Social wallet link v1, the pure part: the consent manifest of a link token and the exact
// message it asks the account's identity key to sign (origin, account, the server-issued
// challenge, expiry), and the check of an envelope against it. The wallet shares an account-level
// xpub only; posting addresses are derived from it (xpub/i/0/0, as socialKeys.postSteps: post i
// with the proof's "two further indexes").
import { Either } from "effect"
import { LinkRefused } from "../../../schemas/common/linkToken.ts"
import type { SocialLinkEnvelope } from "../../../schemas/social/walletLink.ts"
import { socialLinkType } from "../../../schemas/social/walletLink.ts"
import { addressBelow, type WatchOnlyAccount, watchOnlyFromXpub } from "../../chain/keys.ts"
import { signatureShapeError, signerAddressError, verifyMessage } from "../../chain/message.ts"
import { ledgerParams } from "../../chain/params.ts"
import { postSteps } from "../accounts/socialKeys.ts"
import { linkDeepLink } from "../../platform/identity/linkTokens.ts"
import { publicHead } from "../../platform/webapp/publicPages.ts"
import { escapeHtml } from "../pages/html.ts"

/** Spec: social activity derives under m/44'/696969'/1101'. */
export const socialAccountPath = `m/44'/${ledgerParams.coinType}'/1101'`
const accountPathShape = new RegExp(`^m/44'/${ledgerParams.coinType}'/\\d{1,10}'$`)
export const linkStatement = "Share this account's extended public key (watch-only: it cannot move funds). No payment and no transaction."

export interface SocialLinkFacts {
  readonly challengeId: string
  readonly origin: string
  readonly identityAddress: string
  readonly expiresAtMs: number
}

export const socialLinkUrl = (baseUrl: string) => `${baseUrl}/api/public/v1/wallet-link`

export const socialLinkMessage = (f: SocialLinkFacts): string =>
  [
    `${f.origin} wallet link v1`,
    `Account: ${f.identityAddress}`,
    `Challenge: ${f.challengeId}`,
    `Expires: ${new Date(f.expiresAtMs).toISOString()}`,
    linkStatement
  ].join("\n")

export const socialManifestOf = (f: SocialLinkFacts, baseUrl: string) => ({
  version: 1 as const,
  type: socialLinkType,
  origin: f.origin,
  challenge: f.challengeId,
  identity_address: f.identityAddress,
  xpub_path: socialAccountPath,
  message: socialLinkMessage(f),
  callback_url: socialLinkUrl(baseUrl),
  expires_at: new Date(f.expiresAtMs).toISOString(),
  statement: linkStatement
})

/** The address of post `index`: xpub/index/0/0, where the composer stamps it from. */
export const postingAddress = (watch: WatchOnlyAccount, index: number) => Either.map(addressBelow(watch, postSteps(index)), (address) => ({ address }))

const refuse = (status: 400 | 401, code: string, message: string) => Either.left(new LinkRefused({ status, code, message }))

export const checkSocialEnvelope = (e: SocialLinkEnvelope, f: SocialLinkFacts): Either.Either<WatchOnlyAccount, LinkRefused> => {
  const badAddress = signerAddressError(e.identity_address)
  if (badAddress !== undefined) return refuse(400, "invalid_parameter", `Parameter 'identity_address' is invalid: ${badAddress}`)
  if (!accountPathShape.test(e.xpub_path)) return refuse(400, "invalid_parameter", `Parameter 'xpub_path' must be an account path like ${socialAccountPath}`)
  const watch = watchOnlyFromXpub(e.xpub)
  if (Either.isLeft(watch)) return refuse(400, "invalid_parameter", `Parameter 'xpub' is invalid: ${watch.left.message}`)
  const badSignature = signatureShapeError(e.signature)
  if (badSignature !== undefined) return refuse(400, "invalid_parameter", `Parameter 'signature' is invalid: ${badSignature}`)
  if (e.identity_address !== f.identityAddress) return refuse(401, "invalid_signature", "This link token is for another account.")
  const verified = verifyMessage({ address: e.identity_address, message: socialLinkMessage(f), signature: e.signature })
  if (!verified.valid) return refuse(401, "invalid_signature", `The signature does not verify over this link's message: ${verified.reason}`)
  return Either.right(watch.right)
}

/**
 * The page a browser opens at a link URL (`url`, the token in it), in the web apps' design like the
 * desk's: what linking shares, the QR of the URL (`qrSvg`, drawn by the caller) for the phone's
 * wallet, an "Open in wallet" deep link for a wallet on this device, and the manifest for a wallet
 * reading the page in a `<script type="wl-link-xpubs">` block. Wallets asking for JSON get the
 * manifest itself.
 */
export const socialLinkPage = (manifest: ReturnType<typeof socialManifestOf>, url: string, qrSvg: string): string => {
  // JSON inside a script element: `<` escaped so no text of ours can close the element.
  const json = JSON.stringify(manifest).replace(/</g, "\\u003c")
  return `<!doctype html>
<html lang="en"><head>${publicHead("Link your wallet")}</head>
<body class="public">
<header class="top"><a class="brand" href="/app/">Shardline Social</a></header>
<main id="main" class="link-page">
<section aria-labelledby="link-h">
<h1 id="link-h">Link your wallet to ${escapeHtml(manifest.origin)}</h1>
<p>Scan this code with your Shardline wallet, or open it in the wallet on this device. The wallet shares the extended public key
of your social account (${escapeHtml(manifest.xpub_path)}; watch-only: it cannot move funds), from which each post gets its own address,
and signs the request with your identity address. Nothing is paid; your wallet keeps its keys and signs each post's stamps itself.</p>
<div class="qr" role="img" aria-label="QR code of this wallet link" data-qr="${escapeHtml(url)}">${qrSvg}</div>
<p><a class="button" href="${escapeHtml(linkDeepLink(url))}">Open in wallet</a></p>
<p class="muted">This link works once and expires at <time datetime="${escapeHtml(manifest.expires_at)}">${escapeHtml(manifest.expires_at.replace("T", " ").replace(/\.\d+Z$/, " UTC"))}</time>.</p>
<details><summary>What the wallet is asked for</summary><dl class="kv">
<dt>Account</dt><dd class="mono">${escapeHtml(manifest.identity_address)}</dd>
<dt>Key shared</dt><dd>the xpub at ${escapeHtml(manifest.xpub_path)}</dd>
<dt>Message to sign</dt><dd><pre>${escapeHtml(manifest.message)}</pre></dd>
</dl></details>
</section>
</main>
<script type="${socialLinkType}">${json}</script>
</body></html>
`
}
