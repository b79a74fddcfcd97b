// Desk wallet linking, the pure part (spec: "Wallet-link manifest and payload", "Wallet-link
// signing rules"): the manifest a link token shows, and the check of a submitted envelope
// against it. Malformed input is a 400 (the token stays usable); a well-formed envelope that does
// not prove the key, or proves it over another manifest, is a 401.
import { Either } from "effect"
import { LinkRefused } from "../../../schemas/common/linkToken.ts"
import type { WalletLinkEnvelope, WalletLinkManifest } from "../../../schemas/desk/walletLink.ts"
import { linkType } from "../../../schemas/desk/walletLink.ts"
import { bech32ShapeHrp, validateLedgerAddress } from "../../chain/address.ts"
import { evmPayoutAddress } from "../../chain/evm/payoutAddress.ts"
import { deriveAddress, RECEIVE, signingKeyPath, type WatchOnlyAccount, watchOnlyFromXpub } from "../../chain/keys.ts"
import { keyAddresses, signatureShapeError, verifyMessageByKey } from "../../chain/message.ts"
import { ledgerParams } from "../../chain/params.ts"
import { canonicalJson } from "../../crypto/canonicalJson.ts"
import { linkDeepLink } from "../../platform/identity/linkTokens.ts"
import { publicHead } from "../../platform/webapp/publicPages.ts"

export interface LinkTokenFacts {
  readonly challengeId: string
  readonly issuedAtMs: number
  readonly expiresAtMs: number
  readonly allowRebind: boolean
}

/** The desk's origin (manifest `from`) and this token's link URL (manifest `callback_url`). */
export interface LinkUrls {
  readonly from: string
  readonly callbackUrl: string
}

export const linkUrl = (deskBaseUrl: string, token: string) => `${deskBaseUrl}/api/public/v1/wallet-link?token=${token}`

export { linkDeepLink }

/**
 * The token a POST is for: the query's, else the one inside the signed `payload.callback_url` (a
 * wallet may POST the envelope to the bare path). Whether that URL is really this token's link is
 * the entity's check; here only where to find the token.
 */
export const postedLinkToken = (queryToken: string | undefined, callbackUrl: string): string | undefined => {
  if (queryToken !== undefined) return queryToken
  try {
    return new URL(callbackUrl).searchParams.get("token") ?? undefined
  } catch {
    return undefined
  }
}

export const manifestOf = (facts: LinkTokenFacts, urls: LinkUrls): WalletLinkManifest => ({
  v: 1,
  type: linkType,
  challenge_id: facts.challengeId,
  from: urls.from,
  callback_url: urls.callbackUrl,
  chains: ["LEDGER", "EVM", "BASE"],
  exp: Math.floor(facts.expiresAtMs / 1000),
  issued_at: new Date(facts.issuedAtMs).toISOString(),
  expires_at: new Date(facts.expiresAtMs).toISOString(),
  allow_rebind: facts.allowRebind,
  sign: {
    message: "canonicalJson(payload)",
    scheme: "BIP-137",
    encoding: "base64",
    prefix: ledgerParams.network.messagePrefix.slice(1),
    path: signingKeyPath()
  },
  wants: {
    LEDGER: "required: the account-level extended public key m/44'/696969'/0' (watch-only)",
    EVM: "required: a 0x address or an EVM extended public key (its m/0/0 is taken); the USDC payout address",
    BASE: "optional: as EVM; defaults to EVM"
  }
})

export interface VerifiedLink {
  readonly watch: WatchOnlyAccount
  readonly xpub: string
  /** The legacy P2PKH address of m/44'/696969'/0'/0/0: the member's token payout address. */
  readonly signingAddress: string
  readonly evmAddress: string
  readonly baseAddress: string
  readonly wallet: string
}

const refuse = (status: 400 | 401, code: string, message: string) => Either.left(new LinkRefused({ status, code, message }))
const malformed = (message: string) => refuse(400, "invalid_parameter", message)
const unproven = (message: string) => refuse(401, "invalid_signature", message)

/**
 * The fields the wallet copies from the manifest: any difference is a signature over another link.
 * `issued_at` is not among them: the spec takes only `challenge_id` from the manifest, and a wallet
 * stamps its own signing time there (checked by `issuedAtProblem`).
 */
const copiedFields = ["v", "type", "challenge_id", "from", "callback_url", "exp"] as const

/** How far a wallet's clock may be off ours: its `issued_at` may lie this much outside the token's life. */
export const issuedAtSkewMs = 120_000

/** ISO 8601 date and time with a zone (`Z` or ±hh:mm), seconds and fractions optional. */
const isoTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/**
 * Why a wallet's signing time cannot be this link's: before the token was issued, after it expired,
 * or ahead of now, each beyond the clock skew. Undefined when it fits.
 */
const issuedAtProblem = (issuedAtMs: number, manifest: WalletLinkManifest, nowMs: number): string | undefined => {
  const lifeStartMs = Date.parse(manifest.issued_at)
  const lifeEndMs = Math.min(Date.parse(manifest.expires_at), nowMs)
  if (issuedAtMs < lifeStartMs - issuedAtSkewMs) return `it is before this link was issued (${manifest.issued_at})`
  if (issuedAtMs > lifeEndMs + issuedAtSkewMs) return `it is after this link's life (issued ${manifest.issued_at}, expires ${manifest.expires_at}) or ahead of now`
  return undefined
}

export const checkEnvelope = (
  envelope: WalletLinkEnvelope,
  manifest: WalletLinkManifest,
  nowMs: number
): Either.Either<VerifiedLink, LinkRefused> => {
  const { payload, address, signature } = envelope
  const issuedAtMs = isoTimestamp.test(payload.issued_at) ? Date.parse(payload.issued_at) : Number.NaN
  if (!Number.isFinite(issuedAtMs)) {
    return malformed("Parameter 'payload.issued_at' is invalid: an ISO 8601 timestamp such as 2026-01-02T03:04:05.678Z")
  }
  if (bech32ShapeHrp(address) !== undefined) {
    return malformed("Parameter 'address' is a bech32 address; send the legacy T… address of m/44'/696969'/0'/0/0 from your wallet")
  }
  const check = validateLedgerAddress(address)
  if (!check.valid) return malformed(`Parameter 'address' is invalid: ${check.error}`)
  if (payload.chains[0] !== "LEDGER" || !payload.chains.includes("EVM")) {
    return malformed("Parameter 'payload.chains' must start with LEDGER and include EVM")
  }
  const watch = watchOnlyFromXpub(payload.xpubs.LEDGER)
  if (Either.isLeft(watch)) return malformed(`Parameter 'payload.xpubs.LEDGER' is invalid: ${watch.left.message}`)
  const evm = evmPayoutAddress(payload.xpubs.EVM)
  if (Either.isLeft(evm)) return malformed(`Parameter 'payload.xpubs.EVM' is invalid: ${evm.left.message}`)
  const base = payload.xpubs.BASE === undefined ? evm : evmPayoutAddress(payload.xpubs.BASE)
  if (Either.isLeft(base)) return malformed(`Parameter 'payload.xpubs.BASE' is invalid: ${base.left.message}`)
  const shape = signatureShapeError(signature)
  if (shape !== undefined) return malformed(`Parameter 'signature' is invalid: ${shape}`)

  const signer = deriveAddress(watch.right, RECEIVE, 0)
  if (Either.isLeft(signer)) return malformed(`Parameter 'payload.xpubs.LEDGER' is invalid: ${signer.left.message}`)
  const own = keyAddresses(signer.right.publicKey)
  if (Either.isLeft(own)) return malformed(own.left.message)
  if (![own.right.p2pkh, own.right.p2pkhUncompressed, own.right.p2shP2wpkh].includes(address)) {
    return unproven(`address ${address} is not the key at ${signingKeyPath()} of the LEDGER xpub`)
  }
  const verified = verifyMessageByKey({ publicKey: signer.right.publicKey, message: canonicalJson(payload), signature })
  if (!verified.valid) return unproven(`the signature does not verify over canonicalJson(payload): ${verified.reason}`)
  for (const field of copiedFields) {
    if (payload[field] !== manifest[field]) {
      return unproven(`the signed payload is not this link's manifest: '${field}' differs (a payload made for another link, or changed after signing)`)
    }
  }
  const late = issuedAtProblem(issuedAtMs, manifest, nowMs)
  if (late !== undefined) return unproven(`the signed payload's 'issued_at' is not within this link's life (±${issuedAtSkewMs / 1000} s): ${late}`)
  return Either.right({
    watch: watch.right,
    xpub: watch.right.xpub,
    signingAddress: own.right.p2pkh,
    evmAddress: evm.right,
    baseAddress: base.right,
    wallet: payload.wallet
  })
}

/**
 * The HTML page a browser opens at the link URL: the manifest in a `<script type="wl-link-xpubs">`
 * block for the wallet, and for a person, in the web apps' design, what linking shares, the link's
 * QR (`qrSvg`, drawn by the caller) to scan with the phone's wallet, and an "Open in wallet" deep
 * link for a wallet on the same device.
 */
export const manifestPage = (manifest: WalletLinkManifest, qrSvg: string): string => {
  // JSON inside a script element: `<` escaped so no text of ours can close the element.
  const json = JSON.stringify(manifest).replace(/</g, "\\u003c")
  return `<!doctype html>
<html lang="en"><head>${publicHead("Link your wallet")}</head>
<body class="public">
<header class="top"><a class="brand" href="/app/">Shardline Token desk</a></header>
<main id="main" class="link-page">
<section aria-labelledby="link-h">
<h1 id="link-h">Link your wallet to ${escapeHtml(manifest.from)}</h1>
<p>Scan this code with your Shardline wallet, or open it in the wallet on this device. The wallet shares your account's extended
public key (watch-only: it cannot move funds) and signs the request with the key at ${escapeHtml(manifest.sign.path)}. Nothing is paid.</p>
<div class="qr" role="img" aria-label="QR code of this wallet link" data-qr="${escapeHtml(manifest.callback_url)}">${qrSvg}</div>
<p><a class="button" href="${escapeHtml(linkDeepLink(manifest.callback_url))}">Open in wallet</a></p>
<p class="muted">This link works once and expires at <time datetime="${escapeHtml(manifest.expires_at)}">${escapeHtml(manifest.expires_at.replace("T", " ").replace(/\.\d+Z$/, " UTC"))}</time>.</p>
<details><summary>What the wallet is asked for</summary><dl class="kv">
<dt>Ledger</dt><dd>${escapeHtml(manifest.wants.LEDGER)}</dd>
<dt>EVM</dt><dd>${escapeHtml(manifest.wants.EVM)}</dd>
<dt>Base</dt><dd>${escapeHtml(manifest.wants.BASE)}</dd>
<dt>Replacing a linked wallet</dt><dd>${manifest.allow_rebind ? "allowed by this link" : "not allowed by this link"}</dd>
</dl></details>
</section>
</main>
<script type="${linkType}">${json}</script>
</body></html>
`
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
