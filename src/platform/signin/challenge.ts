// QR sign-in, the pure part: the `wl-login` envelope a QR holds, its deep link, and the exact
// message the wallet signs. The message names the origin, the challenge and its nonce and expiry,
// so a signature made for another site or another challenge never signs in here.
import type { LoginEnvelope } from "../../../schemas/common/signIn.ts"
import { loginType } from "../../../schemas/common/signIn.ts"
import { ledgerParams } from "../../chain/params.ts"

/** Spec: sign-in challenge lifetime 5 minutes; status polling every 2 seconds. */
export const CHALLENGE_TTL_MS = 5 * 60_000
export const POLL_INTERVAL_MS = 2_000
/** The custom scheme a wallet app on the same device registers. */
export const DEEP_LINK_SCHEME = "shardline-wallet"
export const noPaymentStatement = "No payment and no transaction: signing only proves you hold this address."

export interface ChallengeFacts {
  readonly id: string
  readonly nonce: string
  readonly origin: string
  readonly expiresAtMs: number
}

export const callbackUrl = (baseUrl: string, id: string) => `${baseUrl}/api/public/auth/wallet-callback?id=${id}`

export const envelopeOf = (c: ChallengeFacts, baseUrl: string): LoginEnvelope => ({
  version: 1,
  type: loginType,
  origin: c.origin,
  id: c.id,
  nonce: c.nonce,
  callback: callbackUrl(baseUrl, c.id),
  expiry: Math.floor(c.expiresAtMs / 1000),
  chain: ledgerParams.name,
  statement: noPaymentStatement
})

export const deepLinkOf = (envelope: LoginEnvelope) =>
  `${DEEP_LINK_SCHEME}://login?envelope=${Buffer.from(JSON.stringify(envelope), "utf8").toString("base64url")}`

export const signInMessage = (c: ChallengeFacts): string =>
  [
    `${c.origin} asks you to sign in with your wallet.`,
    `Challenge: ${c.id}`,
    `Nonce: ${c.nonce}`,
    `Expires: ${new Date(c.expiresAtMs).toISOString()}`,
    noPaymentStatement
  ].join("\n")

/** The one-time token names its challenge: `<challenge id>.<secret>`. */
export const exchangeTokenParts = (token: string): { readonly id: string; readonly secret: string } | undefined => {
  const m = /^([A-Za-z0-9]{22})\.([A-Za-z0-9]{43})$/.exec(token)
  return m === null ? undefined : { id: m[1]!, secret: m[2]! }
}

export const isChallengeId = (id: string) => /^[A-Za-z0-9]{22}$/.test(id)
