// Playing the wallet app in the shared sign-in of any listener (schemas/common/signIn.ts): a
// browser mints a challenge (and gets its sign-in cookie), the wallet reads the callback's message
// and signs it (BIP-137, the ledger's prefix), the browser polls for the one-time token and trades
// it for a session. Works against the exchange, desk and social listeners alike.
import { ECPairFactory } from "ecpair"
import type { Page } from "playwright-core"
import * as ecc from "tiny-secp256k1"
import { unwrap } from "../../harness/either.ts"
import { p2pkhAddressOfPubkey } from "../../src/chain/address.ts"
import { signMessage } from "../../src/chain/message.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import type { TestWallet } from "./linkWallet.ts"

const ECPair = ECPairFactory(ecc)

const cookieOf = (headers: Headers, name: string): string | undefined => {
  for (const line of headers.getSetCookie()) {
    const m = new RegExp(`^${name}=([^;]*)`).exec(line)
    if (m !== null) return `${name}=${m[1]}`
  }
  return undefined
}

export const authUrl = (baseUrl: string, path: string) => `${baseUrl}/api/public/auth/${path}`

/** The wallet's half: fetch the exact message of challenge `id` and post its signature. */
export const walletSigns = async (baseUrl: string, id: string, wallet: TestWallet) => {
  const { message } = (await (await fetch(authUrl(baseUrl, `wallet-callback?id=${id}`))).json()) as { message: string }
  const r = await fetch(authUrl(baseUrl, "wallet-callback"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, address: wallet.addresses.p2pkh, signature: wallet.sign(message) })
  })
  if (r.status !== 200) throw new Error(`wallet-callback answered ${r.status}: ${await r.text()}`)
}

export interface SignedIn {
  /** The bearer token. */
  readonly token: string
  /** `Cookie:` header value carrying the session cookie. */
  readonly cookie: string
  readonly address: string
}

/** A browser mints a challenge, the wallet signs it, the browser polls: the one-time token, not yet exchanged. */
export const signedToken = async (baseUrl: string, wallet: TestWallet, cookiePrefix = "sl"): Promise<string> => {
  const minted = await fetch(authUrl(baseUrl, "wallet-challenge"), { method: "POST" })
  const challenge = (await minted.json()) as { id: string }
  const browser = cookieOf(minted.headers, `${cookiePrefix}_signin`)
  if (browser === undefined) throw new Error(`no ${cookiePrefix}_signin cookie from wallet-challenge`)
  await walletSigns(baseUrl, challenge.id, wallet)
  const status = (await (await fetch(authUrl(baseUrl, `wallet-status?id=${challenge.id}`), { headers: { cookie: browser } })).json()) as { token?: string }
  if (status.token === undefined) throw new Error("wallet-status gave no token")
  return status.token
}

/** The whole flow as a browser plus a wallet; `cookiePrefix` is the service's (sl, sl_exchange, sl_desk). */
export const signInWithWallet = async (baseUrl: string, wallet: TestWallet, cookiePrefix = "sl"): Promise<SignedIn> => {
  const token = await signedToken(baseUrl, wallet, cookiePrefix)
  const exchanged = await fetch(authUrl(baseUrl, "wallet-exchange"), {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token })
  })
  const session = (await exchanged.json()) as { token: string; address: string }
  const cookie = cookieOf(exchanged.headers, `${cookiePrefix}_session`)
  if (cookie === undefined) throw new Error(`no ${cookiePrefix}_session cookie from wallet-exchange`)
  return { token: session.token, cookie, address: session.address }
}

/** A wallet app holding one key given as WIF (what `social account create` prints). */
export const walletFromWif = (wif: string): TestWallet => {
  const pair = ECPair.fromWIF(wif, ledgerParams.network)
  const address = unwrap(p2pkhAddressOfPubkey(pair.publicKey))
  const sign = (message: string) => unwrap(signMessage(message, pair.privateKey!, ledgerParams, {}))
  return { addresses: { p2pkh: address }, sign } as unknown as TestWallet
}

/**
 * Waits until the listener mints a sign-in challenge: a node that has just started (under load) may
 * take tens of seconds to place its first entities, which a page's 40 s wait should not have to
 * cover. For a test's beforeAll; bounded by `timeoutMs`.
 */
export const awaitSignInReady = async (baseUrl: string, timeoutMs = 90_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    // A 503 (the entity not placed yet, under load) is asked again until the deadline.
    const r = await fetch(authUrl(baseUrl, "wallet-challenge"), { method: "POST", signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) })
    if (r.status === 200) return
    if (r.status !== 503 || Date.now() > deadline) throw new Error(`wallet-challenge answered ${r.status}: ${await r.text()}`)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
}

/** Signs in a browser page: open /app/ (it goes to sign-in), play the wallet on the QR's challenge, land on /app/. */
export const signInPage = async (page: Page, baseUrl: string, wallet: TestWallet) => {
  await page.goto(`${baseUrl}/app/`)
  await page.waitForURL(`${baseUrl}/app/sign-in`)
  // A node just started may take a while to place its first entities (the challenge's Mint).
  const id = await page.locator("[data-challenge]").getAttribute("data-challenge", { timeout: 40_000 }).catch(async (e) => {
    throw new Error(`the sign-in page shows no challenge: "${(await page.locator("body").innerText()).slice(0, 300)}" (${String(e).split("\n")[0]})`)
  })
  await walletSigns(baseUrl, id!, wallet)
  await page.waitForURL(`${baseUrl}/app/`, { timeout: 15_000 })
  return id!
}
