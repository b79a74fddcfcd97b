// The social web app in a real browser (issue 24): headless Chromium signs in by the QR flow while
// the test plays the wallet (BIP-137 over the challenge's message), publishes a post with a media
// file through the composer (upload progress, then the proof), opens the post page; lists the
// member's posts with their hosting state (renew extends it and spends the balance, takedown ends
// it) beside the balance and its top-up address (a top-up shows without a reload); a wallet new to
// the service links its xpub by the page's QR and its post waits for its signature; and the failure
// paths: an expired challenge, a revoked session, a cross-site write on the cookie session.
// Screenshots in .tmp/screenshots/.
import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { BIP32Factory } from "bip32"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { Effect, Either, Layer } from "effect"
import { configLayer } from "../../src/config.ts"
import { pgClientLayer } from "../support/pg.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { unwrap } from "../../harness/either.ts"
import { SocialApi } from "../../schemas/social/api.ts"
import { SessionAuth } from "../../schemas/social/security.ts"
import { extendedKeysAt } from "../../src/chain/keys.ts"
import { devnetFaucet } from "../../src/chain/ledger/devnetFaucet.ts"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { parseAmount } from "../../src/chain/units.ts"
import { topUpConfirmations } from "../../src/social/accounts/TopUps.ts"
import { createAccount } from "../../src/social/accounts/Accounts.ts"
import { signStamps } from "../../src/cli/socialSign.ts"
import { collectPageErrors, computedStyle, fitsWidth, launchBrowser, screenshot, type TestBrowser, unlabelledControls } from "../support/browser.ts"
import { crossSiteAttempts, sessionWrites } from "../support/crossSite.ts"
import { makeWallet } from "../support/linkWallet.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { awaitSignInReady, signInPage, signInWithWallet, walletFromWif } from "../support/walletSignIn.ts"

let db: TestDatabase
let node: RunningNode
let browser: TestBrowser
const explorer = "https://explorer.example/tx/{txid}"
/** The post the first test publishes, for the public-page tests after it. */
let published: { shortId: string; txHash: string } | undefined

beforeAll(async () => {
  db = await createTestDatabase("webapp_social")
  ;[node, browser] = await Promise.all([startNode(db.url, { SHARDLINE_MESSAGE_POLL_MS: "200", SHARDLINE_SOCIAL_EXPLORER_TX_URL: explorer }), launchBrowser()])
  await awaitSignInReady(node.socialUrl)
}, 150_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await db?.drop()
})

const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)
const sql = (text: string) => inNode(Effect.flatMap(SqlClient.SqlClient, (s) => s.unsafe(text)))
const ECPair = ECPairFactory(ecc)
/** A 1×1 PNG. */
const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")

describe("social web app", () => {
  it("signs in with the wallet, publishes a post with a media file, shows the proof and opens the post page", { timeout: 60_000 }, async () => {
    const account = await inNode(createAccount("webapp_alice"))
    const context = await browser.context()
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    await signInPage(page, node.socialUrl, walletFromWif(account.wif))
    await expect.poll(() => page.locator("h1").textContent()).toBe("@webapp_alice")
    expect(await page.locator(".who").textContent()).toBe(account.address)
    // The session cookie is HttpOnly (the page's script cannot read it) and SameSite=Strict.
    expect((await context.cookies()).find((c) => c.name === "sl_session")).toMatchObject({ httpOnly: true, sameSite: "Strict" })
    expect(await page.evaluate("document.cookie")).toBe("")

    await page.getByLabel("What is new?").fill("Hello from the browser")
    await page.getByLabel("Tags").fill("webapp, test")
    await page.getByLabel("Media").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: png })
    await screenshot(page, "social-composer")
    await page.getByRole("button", { name: "Publish" }).click()
    const proof = page.locator("#proof")
    await proof.waitFor({ timeout: 20_000 })
    expect(await page.locator("progress").getAttribute("value")).toBe("1")
    const txHash = await proof.locator("[data-field=txHash]").textContent()
    expect(txHash).toMatch(/^[0-9a-f]{64}$/)
    expect(await proof.locator("[data-field=opReturn]").textContent()).toMatch(/\|/)
    // The member's posts list shows it with its hosting state.
    await expect.poll(() => page.locator("[data-post]").count()).toBe(1)
    expect(await page.locator("[data-post]").getAttribute("data-state")).toBe("hosted")
    await screenshot(page, "social-app")
    expect(await unlabelledControls(page)).toEqual([])

    await proof.locator("[data-link=page]").click()
    await page.waitForURL(/\/p\//)
    published = { shortId: new URL(page.url()).pathname.split("/").pop()!, txHash: txHash! }
    expect(await page.content()).toContain("Hello from the browser")
    expect(await page.locator(`img[src*="/api/stream/"]`).count()).toBe(1)
    await screenshot(page, "social-post-page")
    expect(errors).toEqual([])
    await context.close()
  })

  it("shows the post page like a social network's post, with the proof in words and the txid at the explorer, readable at phone width; embeds in the app's design", { timeout: 60_000 }, async () => {
    expect(published).toBeDefined()
    const { shortId, txHash } = published!
    for (const phone of [false, true]) {
      const context = await browser.context({ phone })
      const page = await context.newPage()
      const errors = collectPageErrors(page)
      const answer = await page.goto(`${node.socialUrl}/p/${shortId}`)
      expect(answer!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'")
      const post = page.locator(`article.post[data-post="${shortId}"]`)
      expect(await post.locator(".author").textContent()).toBe("@webapp_alice")
      expect(await post.locator(".who-block").textContent()).toMatch(/#[A-Z2-7]{6}/)
      expect(await post.locator(".body").textContent()).toBe("Hello from the browser")
      expect(await post.locator(".tags li").allTextContents()).toEqual(["#webapp", "#test"])
      const proof = post.locator("section.proof")
      expect(await proof.locator("h2").textContent()).toBe("What the ledger proves")
      // The page source wraps lines; a reader sees the words, so compare them with runs of spaces collapsed.
      expect((await proof.textContent())?.replace(/\s+/g, " ")).toContain("The ledger proves when the post was published and by which wallet")
      expect(await proof.locator("a[data-field=txHash]").first().getAttribute("href")).toBe(`https://explorer.example/tx/${txHash}`)
      // The styles came from the listener (no CDN): the post is a card, and nothing is wider than the screen.
      expect(await computedStyle(post, "borderRadius")).toBe("12px")
      expect(await fitsWidth(page)).toBe(true)
      await screenshot(page, phone ? "social-post-page-phone" : "social-post-page-desktop")
      for (const theme of ["dark", "light"]) {
        const embed = await page.goto(`${node.socialUrl}/embed/p/${shortId}?theme=${theme}`)
        expect(embed!.headers()["content-security-policy"]).toContain("frame-ancestors *")
        expect(await page.locator("body").getAttribute("class")).toBe(`embed theme-${theme}`)
        expect(await page.locator("article.post .body").textContent()).toBe("Hello from the browser")
        expect(await page.getByRole("link", { name: "View on Shardline" }).getAttribute("href")).toBe(`${node.socialUrl}/p/${shortId}`)
        expect(await fitsWidth(page)).toBe(true)
      }
      await screenshot(page, phone ? "social-embed-light-phone" : "social-embed-light")
      expect(errors).toEqual([])
      await context.close()
    }
  })

  it("lists the member's posts with their hosting state: renew extends it and spends the balance, takedown ends it; the top-up address, and a top-up credited without a reload", { timeout: 90_000 }, async () => {
    const account = await inNode(createAccount("webapp_bob"))
    const context = await browser.context()
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    await signInPage(page, node.socialUrl, walletFromWif(account.wif))
    await expect.poll(() => page.locator("h1").textContent()).toBe("@webapp_bob")
    // Set in the page: still there at the end means the page was never reloaded.
    await page.evaluate("window.noReloadMark = 1")
    const balanceText = page.locator("[data-field=balance]")
    const balance = async () => unwrap(parseAmount((await balanceText.textContent())!, 8))
    const start = await balance()
    expect(start).toBeGreaterThan(0n)
    // The top-up address is the service's, with its QR.
    const { topUpAddress } = (await (await fetch(`${node.socialUrl}/api/public/ledger-health`)).json()) as { topUpAddress: string }
    expect(await page.locator("[data-field=topUpAddress]").textContent()).toBe(topUpAddress)
    expect(await page.locator(`.qr[data-qr="${topUpAddress}"]`).count()).toBe(1)

    await page.getByLabel("What is new?").fill("A post to renew and take down")
    await page.getByRole("button", { name: "Publish" }).click()
    await page.locator("#proof").waitFor({ timeout: 20_000 })
    const row = page.locator("[data-post]")
    await expect.poll(() => row.getAttribute("data-state"), { timeout: 10_000 }).toBe("hosted")
    await expect.poll(balance).toBeLessThan(start)
    const price = start - (await balance())

    // Renew: hosting paid further, one more post price spent.
    const paidUntil = Date.parse((await row.getAttribute("data-paid-until"))!)
    await row.getByRole("button", { name: "Renew" }).click()
    await page.getByText("Hosting renewed for another period.").waitFor({ timeout: 15_000 })
    await expect.poll(async () => Date.parse((await row.getAttribute("data-paid-until"))!)).toBeGreaterThan(paidUntil)
    await expect.poll(balance).toBe(start - 2n * price)
    expect(await row.locator("[data-field=hosting]").textContent()).toMatch(/^Hosted until \S+$/)
    await screenshot(page, "social-posts")

    // Take down: the state says so, and the post has nothing left to renew or take down.
    await row.getByRole("button", { name: "Take down" }).click()
    await page.getByText("The post was taken down.").waitFor({ timeout: 15_000 })
    await expect.poll(() => row.getAttribute("data-state")).toBe("taken_down")
    expect(await row.getByRole("button").count()).toBe(0)
    expect(await row.locator("[data-field=hosting]").textContent()).toBe("Taken down by you")

    // A top-up from the identity address, credited at its depth, shows on the open page.
    const before = await balance()
    const key = new Uint8Array(ECPair.fromWIF(account.wif, ledgerParams.network).privateKey!)
    await node.run(Effect.gen(function*() {
      const ledger = yield* UtxoLedger
      const faucet = devnetFaucet(ledger)
      yield* faucet.pay(account.address, 1_000_000n)
      yield* ledger.mine(1, faucet.address)
      yield* makeKeyWallet(ledger, key).pay(topUpAddress, 300_000n)
      yield* ledger.mine(topUpConfirmations, faucet.address)
    }))
    await expect.poll(balance, { timeout: 30_000 }).toBe(before + 300_000n)
    expect(await page.evaluate("window.noReloadMark")).toBe(1)
    expect(errors).toEqual([])
    await context.close()
  })

  it("a wallet new to the service gets an account by signing in, links its xpub by the page's QR, and its post waits for the wallet, which the page hands the stamps by QR and deep link; signed there, the page shows the proof; a renewal is handed over the same way", { timeout: 150_000 }, async () => {
    const seed = randomBytes(32)
    const wallet = makeWallet(seed)
    const context = await browser.context()
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    await signInPage(page, node.socialUrl, wallet)
    await expect.poll(() => page.locator("h1").textContent()).toMatch(/^#[A-Z2-7]{6}$/)
    expect(await page.locator("[data-field=balance]").textContent()).toBe("0")

    // Before the link, a post is refused: the API's reason, shown as a sentence.
    await page.getByLabel("What is new?").fill("Too early")
    await page.getByRole("button", { name: "Publish" }).click()
    const refusal = page.locator(".notice.error")
    await refusal.waitFor({ timeout: 15_000 })
    expect(await refusal.textContent()).toMatch(/^[A-Z][^]*\w\.$/)
    expect(await page.locator("[data-post]").count()).toBe(0)

    // The wallet-link QR: waiting until the wallet links its xpub, then linked.
    await page.getByRole("button", { name: "Link your wallet" }).click()
    const qr = page.locator(".link-qr .qr")
    await qr.waitFor()
    expect(await page.locator(".link-state").getAttribute("data-state")).toBe("waiting")
    const url = (await qr.getAttribute("data-qr"))!
    expect(url).toMatch(new RegExp(`^${node.socialUrl}/api/public/v1/wallet-link\\?token=\\w{43}$`))
    expect(await page.getByRole("link", { name: "Open in wallet" }).getAttribute("href")).toBe(`shardline-wallet://link?url=${encodeURIComponent(url)}`)
    await screenshot(page, "social-link-wallet")
    // Wallets and programs get the manifest as JSON (no Accept, */*, JSON), the same each time; a browser gets the page.
    const accepts: ReadonlyArray<Record<string, string>> = [{}, { accept: "*/*" }, { accept: "application/json" }]
    const asJson = await Promise.all(accepts.map(async (headers) => {
      const r = await fetch(url, { headers })
      expect(r.headers.get("content-type")).toMatch(/^application\/json/)
      expect(r.headers.get("vary")).toMatch(/accept/i)
      return r.json()
    }))
    expect(asJson[1]).toEqual(asJson[0])
    expect(asJson[2]).toEqual(asJson[0])
    const manifest = asJson[0] as { message: string; type: string }
    expect(manifest.type).toBe("wl-link-xpubs")
    const linkPage = await context.newPage()
    const shown = await linkPage.goto(url)
    expect(shown!.headers()["content-type"]).toMatch(/^text\/html/)
    expect(shown!.headers()["vary"]).toMatch(/accept/i)
    expect(shown!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'")
    expect(await linkPage.locator("h1").textContent()).toBe(`Link your wallet to ${node.socialUrl}`)
    expect(await linkPage.locator(`.qr[data-qr="${url}"] svg`).count()).toBe(1)
    expect(await linkPage.getByRole("link", { name: "Open in wallet" }).getAttribute("href")).toBe(`shardline-wallet://link?url=${encodeURIComponent(url)}`)
    expect(JSON.parse((await linkPage.locator('script[type="wl-link-xpubs"]').textContent())!)).toEqual(manifest)
    expect(await fitsWidth(linkPage)).toBe(true)
    await screenshot(linkPage, "social-link-page")
    await linkPage.close()
    const path = "m/44'/696969'/1101'"
    const linked = await fetch(`${node.socialUrl}/api/public/v1/wallet-link`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({
        version: 1, type: "wl-link-xpubs", identity_address: wallet.addresses.p2pkh, xpub: unwrap(extendedKeysAt(seed, path)).xpub,
        xpub_path: path, signature: wallet.sign(manifest.message), token: new URL(url).searchParams.get("token")
      })
    })
    expect(linked.status, await linked.clone().text()).toBe(200)
    await expect.poll(() => page.locator(".link-state").getAttribute("data-state"), { timeout: 10_000 }).toBe("linked")

    // Without balance the post is refused in words; with it, the post waits for the wallet's signature.
    await page.getByLabel("What is new?").fill("Signed by my own wallet")
    await page.getByRole("button", { name: "Publish" }).click()
    await page.locator(".notice.error").filter({ hasText: /balance/i }).waitFor({ timeout: 15_000 })
    await sql(`UPDATE social_accounts SET balance_base = 100000000 WHERE address = '${wallet.addresses.p2pkh}'`)
    await page.getByRole("button", { name: "Publish" }).click()
    const stamping = page.locator("#proof [data-field=stamping]")
    await stamping.waitFor({ timeout: 20_000 }).catch(async (e) => {
      throw new Error(`no proof panel; the page says: ${await page.locator(".notice").allTextContents()} (${String(e).split("\n")[0]})`)
    })
    expect(await stamping.textContent()).toMatch(/^The post is written; its stamp waits for your wallet's signature/)
    expect(await page.locator("#proof [data-field=txHash]").textContent()).toBe("pending")
    const row = page.locator("[data-post]")
    await expect.poll(() => row.getAttribute("data-state"), { timeout: 10_000 }).toBe("awaiting_signature")
    expect(await row.locator("[data-field=hosting]").textContent()).toBe("Waiting for your wallet's signature on its stamp")

    // The page hands the stamps to the wallet: a QR of the signing URL and the same URL behind "Open in wallet".
    const signingQr = page.locator(".wallet-signing .qr")
    await signingQr.waitFor({ timeout: 15_000 })
    expect(await page.locator(".wallet-signing .link-state").getAttribute("data-state")).toBe("waiting")
    const signingUrl = (await signingQr.getAttribute("data-qr"))!
    expect(signingUrl).toMatch(new RegExp(`^${node.socialUrl}/api/public/v1/stamp-signing\\?token=[0-9a-f-]{36}\\.[0-9a-f]{32}$`))
    const deepLink = (await page.locator("[data-link=wallet-signing]").getAttribute("href"))!
    expect(deepLink).toBe(`shardline-wallet://sign?url=${encodeURIComponent(signingUrl)}`)
    await screenshot(page, "social-awaiting-signature")

    // Playing the wallet app: it opens the deep link's URL (no session, no cookie), signs each PSBT with
    // the key its derivation names below the account key, and posts them back with the signing code.
    const walletUrl = new URL(new URL(deepLink).searchParams.get("url")!)
    const token = walletUrl.searchParams.get("token")!
    const forged = await fetch(`${walletUrl.origin}${walletUrl.pathname}?token=${token.slice(0, -1)}${token.endsWith("0") ? "1" : "0"}`)
    expect({ status: forged.status, body: await forged.json() }).toMatchObject({ status: 400, body: { error: { code: "invalid_parameter" } } })
    const waiting = (await (await fetch(walletUrl)).json()) as { action: string; signaturesUrl: string; stamps: Array<{ psbt: string }> }
    expect(waiting).toMatchObject({ action: "publish", signaturesUrl: "/api/public/v1/stamp-signing" })
    expect(waiting.stamps.length).toBeGreaterThan(0)
    const accountKey = BIP32Factory(ecc).fromBase58(unwrap(extendedKeysAt(seed, path)).xprv, ledgerParams.network)
    const signed = Either.getOrThrow(signStamps(waiting.stamps.map((x) => x.psbt), accountKey, ledgerParams))
    const submitted = await fetch(`${walletUrl.origin}${waiting.signaturesUrl}`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token, psbts: signed })
    })
    expect(submitted.status, await submitted.clone().text()).toBe(200)
    const answer = (await submitted.json()) as { txHash: string | null; state: string }
    expect(answer.state).toBe("hosted")

    // The open page sees the signatures arrive (its 2 s poll of the public lookup) and shows the proof.
    await expect.poll(() => page.locator(".wallet-signing .link-state").getAttribute("data-state"), { timeout: 15_000 }).toBe("signed")
    expect(await page.locator("#proof [data-field=txHash]").textContent()).toMatch(/^[0-9a-f]{64}$/)
    if (answer.txHash !== null) expect(await page.locator("#proof [data-field=txHash]").textContent()).toBe(answer.txHash)
    expect(await page.locator("#proof [data-field=opReturn]").textContent()).toMatch(/\|/)
    await expect.poll(() => row.getAttribute("data-state"), { timeout: 10_000 }).toBe("hosted")
    await screenshot(page, "social-signed-by-wallet")
    // The code ends with its action: nothing waits any more.
    expect((await fetch(walletUrl)).status).toBe(404)

    // A renewal of this wallet-signed post waits for the wallet too: the page hands its stamp over the same way.
    const paidBefore = Date.parse((await row.getAttribute("data-paid-until"))!)
    await row.getByRole("button", { name: "Renew" }).click()
    const changeSigning = page.locator("[data-area=change-signing] .wallet-signing")
    await changeSigning.locator(".qr").waitFor({ timeout: 15_000 })
    const renewLink = (await changeSigning.locator("[data-link=wallet-signing]").getAttribute("href"))!
    const renewUrl = new URL(new URL(renewLink).searchParams.get("url")!)
    const renewWaiting = (await (await fetch(renewUrl)).json()) as { action: string; signaturesUrl: string; stamps: Array<{ psbt: string }> }
    expect(renewWaiting).toMatchObject({ action: "renew" })
    const renewSigned = Either.getOrThrow(signStamps(renewWaiting.stamps.map((x) => x.psbt), accountKey, ledgerParams))
    const renewed = await fetch(`${renewUrl.origin}${renewWaiting.signaturesUrl}`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: renewUrl.searchParams.get("token"), psbts: renewSigned })
    })
    expect(renewed.status, await renewed.clone().text()).toBe(200)
    await expect.poll(() => changeSigning.locator(".link-state").getAttribute("data-state"), { timeout: 15_000 }).toBe("signed")
    await expect.poll(async () => Date.parse((await page.locator("[data-post]").getAttribute("data-paid-until"))!), { timeout: 15_000 }).toBeGreaterThan(paidBefore)
    expect(errors).toEqual([])
    await context.close()
  })

  it("answers the wallet-link routes in the social shape: another account's code is not found, no session is 401", async () => {
    const mine = await signInWithWallet(node.socialUrl, makeWallet())
    const theirs = await signInWithWallet(node.socialUrl, makeWallet())
    const qr = await fetch(`${node.socialUrl}/api/social/wallet-link`, { method: "POST", headers: { authorization: `Bearer ${mine.token}` } })
    expect(qr.status).toBe(201)
    const { challengeId } = (await qr.json()) as { challengeId: string }
    const state = (token: string) => fetch(`${node.socialUrl}/api/social/wallet-link/${challengeId}`, { headers: { authorization: `Bearer ${token}` } })
    expect(await (await state(mine.token)).json()).toMatchObject({ challengeId, status: "waiting" })
    const other = await state(theirs.token)
    expect({ status: other.status, body: await other.json() }).toMatchObject({ status: 404, body: { error: { code: "not_found" } } })
    const none = await fetch(`${node.socialUrl}/api/social/wallet-link`, { method: "POST" })
    expect({ status: none.status, body: await none.json() }).toMatchObject({ status: 401, body: { error: { code: "invalid_session" } } })
  })

  it("shows an expired challenge as a sentence with a way to start again", { timeout: 30_000 }, async () => {
    const context = await browser.context({ phone: true })
    const page = await context.newPage()
    await page.goto(`${node.socialUrl}/app/sign-in`)
    const id = await page.locator("[data-challenge]").getAttribute("data-challenge")
    expect(await page.locator(".qr svg").count()).toBe(1)
    expect(await page.getByRole("link", { name: "Open in wallet" }).getAttribute("href")).toMatch(/^shardline-wallet:\/\/login\?envelope=/)
    await screenshot(page, "social-sign-in-phone")
    await sql(`UPDATE signin_challenges SET expires_at = now() - interval '1 second' WHERE id = '${id}'`)
    await page.getByText("This sign-in code has expired").waitFor({ timeout: 10_000 })
    await page.getByRole("button", { name: "Get a new code" }).click()
    await expect.poll(() => page.locator("[data-challenge]").getAttribute("data-challenge")).not.toBe(id)
    await context.close()
  })

  it("sends a revoked session back to sign-in", { timeout: 30_000 }, async () => {
    const wallet = makeWallet()
    const context = await browser.context()
    const page = await context.newPage()
    await signInPage(page, node.socialUrl, wallet)
    await page.locator(".who").waitFor()
    await sql(`UPDATE web_sessions SET revoked_at = now() WHERE address = '${wallet.addresses.p2pkh}'`)
    // Every node's cache drops a revoked session within 2 s.
    await expect.poll(async () => {
      await page.goto(`${node.socialUrl}/app/`)
      await page.waitForLoadState("networkidle")
      return new URL(page.url()).pathname
    }, { timeout: 10_000 }).toBe("/app/sign-in")
    await context.close()
  })

  it("refuses every cookie-session change sent as another site would, in the social error shape", { timeout: 40_000 }, async () => {
    const writes = sessionWrites(SocialApi, SessionAuth)
    // The app's own writes are among them (upload, publish, renew, takedown, sign-out, sessions).
    expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual(expect.arrayContaining([
      "POST /api/social/upload", "POST /api/social/posts", "POST /api/public/auth/sign-out", expect.stringMatching(/^POST \/api\/social\/posts\/\w+\/renew$/),
      expect.stringMatching(/^POST \/api\/social\/posts\/\w+\/takedown$/), expect.stringMatching(/^DELETE \/api\/public\/v1\/sessions\//)
    ]))
    const me = await signInWithWallet(node.socialUrl, makeWallet())
    for (const answer of await crossSiteAttempts(node.socialUrl, writes, me.cookie)) {
      expect(answer, JSON.stringify(answer)).toMatchObject({ status: 403, body: { error: { code: "cross_site_refused", message: expect.stringMatching(/\w+ \w+/) } } })
    }
    // The session still works: nothing above signed it out.
    expect((await fetch(`${node.socialUrl}/api/social/me`, { headers: { cookie: me.cookie } })).status).toBe(200)
  })
})
