// The token desk web app in a real browser (issue 24): headless Chromium signs in by the QR flow
// while the test plays the wallet (a wallet the desk has not seen becomes a member), creates a
// partner key (key and signing secret shown once; it works on the partner API), links the wallet
// by the QR the page shows (waiting, then linked; linking turns the member's keys over), sees the
// rewards and their chart once tokens arrive and samples are taken, saves a payout address, and
// sees an order made with its key, with its history and txids. Failure paths: a refused key, a bad
// payout address, an expired link code, an expired sign-in challenge, a revoked session, a
// cross-site write on the cookie session (every one of the desk's session writes).
// Screenshots in .tmp/screenshots/.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { DeskApi } from "../../schemas/desk/api.ts"
import { DeskSessionAuth } from "../../schemas/desk/webApp.ts"
import { issueDeskLinkToken } from "../../src/desk/identity/issueLinkToken.ts"
import { configLayer } from "../../src/config.ts"
import { DevnetChains } from "../../src/platform/devnet/DevnetChains.ts"
import { crossSiteAttempts, sessionWrites } from "../support/crossSite.ts"
import { deskCustomer } from "../support/deskCustomer.ts"
import { collectPageErrors, computedStyle, fitsWidth, launchBrowser, screenshot, type TestBrowser, unlabelledControls } from "../support/browser.ts"
import { deskPayload, makeWallet, type TestWallet } from "../support/linkWallet.ts"
import { pgClientLayer } from "../support/pg.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { awaitSignInReady, signInPage, signInWithWallet } from "../support/walletSignIn.ts"

let db: TestDatabase
let node: RunningNode
let browser: TestBrowser
const v1 = "/api/public/v1"

beforeAll(async () => {
  db = await createTestDatabase("webapp_desk")
  ;[node, browser] = await Promise.all([
    startNode(db.url, { SHARDLINE_MESSAGE_POLL_MS: "200", SHARDLINE_REWARDS_SAMPLE_MS: "1000" }),
    launchBrowser()
  ])
  await awaitSignInReady(node.deskUrl)
}, 150_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await db?.drop()
})

const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)
const sql = (text: string) => inNode(Effect.flatMap(SqlClient.SqlClient, (s) => s.unsafe(text)))
const pay = (to: string, amount: string, asset: string) => node.run(Effect.flatMap(DevnetChains, (c) => c.pay("ledger", to, amount, asset)))
const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as Record<string, any> })

/** The wallet app scanning a wallet-link QR: reads the manifest at its URL, signs the payload, posts it. */
const walletLinks = async (url: string, wallet: TestWallet) => {
  const manifest = (await (await fetch(url, { headers: { accept: "application/json" } })).json()) as Record<string, any>
  const payload = deskPayload(manifest, wallet)
  return json(await fetch(url, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ payload, signature: wallet.signJson(payload), address: wallet.addresses.p2pkh })
  }))
}

describe("token desk web app", () => {
  it("signs in, creates a partner key, links the wallet by its QR, shows the rewards chart, the payout address and an order", { timeout: 120_000 }, async () => {
    const wallet = makeWallet()
    const context = await browser.context()
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    await signInPage(page, node.deskUrl, wallet)
    await page.locator(".who").waitFor()
    expect(await page.locator(".who").textContent()).toBe(wallet.addresses.p2pkh)
    // The session cookie is HttpOnly (the page's script cannot read it) and SameSite=Strict.
    expect((await context.cookies()).find((c) => c.name === "sl_desk_session")).toMatchObject({ httpOnly: true, sameSite: "Strict" })
    expect(await page.evaluate("document.cookie")).toBe("")
    await page.getByText("No wallet is linked yet").waitFor()

    // A refused key: the API's sentence, nothing created.
    await page.getByLabel("Callback URL").fill("http://partner.example/cb")
    await page.getByRole("button", { name: "Create key" }).click()
    await page.getByText("callbackUrl must be https").waitFor()
    expect(await page.locator("[data-key]").count()).toBe(0)

    // A key: cash-out and rewards with a callback URL; the key and its signing secret shown once.
    await page.getByRole("checkbox", { name: "rewards" }).check()
    await page.getByLabel("Callback URL").fill("https://partner.example/cb")
    await page.getByRole("button", { name: "Create key" }).click()
    const created = page.locator("#new-key")
    await created.waitFor()
    const apiKey = (await created.locator("[data-field=apiKey]").textContent())!
    expect(await created.locator("[data-field=signingSecret]").textContent()).toMatch(/^whsec_\w{43}$/)
    await expect.poll(() => page.locator("[data-key]").count()).toBe(1)
    expect(await page.locator("[data-key]").textContent()).toContain("https://partner.example/cb")
    // It works on the partner API, for this member.
    const info = await json(await fetch(`${node.deskUrl}${v1}/key`, { headers: { "x-api-key": apiKey } }))
    expect(info).toMatchObject({ status: 200, body: { scopes: ["cashout", "rewards"], callbackUrl: "https://partner.example/cb" } })
    const account = await json(await fetch(`${node.deskUrl}/api/app/account`, { headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ") } }))
    expect(account.body.memberId).toBe(info.body.memberId)

    // The wallet-link QR: waiting until the wallet links, then linked; linking replaced the key.
    await page.getByRole("button", { name: "Link a wallet" }).click()
    const qr = page.locator(".link-qr .qr")
    await qr.waitFor()
    expect(await page.locator(".link-state").getAttribute("data-state")).toBe("waiting")
    expect(await page.getByRole("link", { name: "Open in wallet" }).getAttribute("href")).toMatch(/^shardline-wallet:\/\/link\?url=http/)
    const url = (await qr.getAttribute("data-qr"))!
    expect(url).toMatch(new RegExp(`^${node.deskUrl}${v1}/wallet-link\\?token=\\w{43}$`))
    const linked = await walletLinks(url, wallet)
    expect(linked.status, JSON.stringify(linked.body)).toBe(200)
    await expect.poll(() => page.locator(".link-state").getAttribute("data-state"), { timeout: 10_000 }).toBe("linked")
    expect(await page.locator(`[data-linked="${wallet.addresses.p2pkh}"]`).count()).toBe(1)
    expect((await fetch(`${node.deskUrl}${v1}/key`, { headers: { "x-api-key": apiKey } })).status).toBe(401)
    await expect.poll(() => page.locator("[data-key]").textContent()).toContain("cashout + rewards")

    // Rewards: tokens on a derived address show as the current balance, and the samples draw the chart.
    await pay(wallet.derived(2), "1.5", "SUSD")
    await expect.poll(() => page.locator("[data-field=currentBalance]").textContent(), { timeout: 20_000 }).toBe("1.5")
    await expect.poll(async () => Number(await page.locator("figure.chart").getAttribute("data-points")), { timeout: 20_000 }).toBeGreaterThanOrEqual(2)
    // A flat line (every sample the same) has no height, which Playwright calls hidden: attached is what counts.
    await page.locator("figure.chart svg polyline").first().waitFor({ state: "attached" })
    expect(await page.locator("[data-field=averageDailyBalance]").textContent()).toMatch(/^\d+(\.\d+)?$/)

    // The payout address: linking filled it; a bad one is refused as a sentence; a good one is saved.
    await expect.poll(() => page.locator("[data-field=payoutAddress]").textContent()).toMatch(/^0x[0-9a-fA-F]{40}$/)
    await page.getByLabel("New USDC payout address").fill("0x1234")
    await page.getByRole("button", { name: "Save" }).click()
    await page.getByText("payoutAddress must be an EVM address").waitFor()
    const payout = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
    await page.getByLabel("New USDC payout address").fill(payout)
    await page.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => page.locator("[data-field=payoutAddress]").textContent()).toBe(payout)

    // An order made with a key from the page shows, with its history and the deposit's txid once paid.
    const keyIds = () => page.locator("[data-key]").evaluateAll((ls) => ls.map((l) => l.getAttribute("data-key")!))
    const idsBefore = await keyIds()
    await page.getByRole("button", { name: "Create key" }).click()
    await created.locator("[data-field=apiKey]").filter({ hasNotText: apiKey }).waitFor()
    const orderKey = (await created.locator("[data-field=apiKey]").textContent())!
    await expect.poll(async () => (await keyIds()).length).toBe(idsBefore.length + 1)
    const orderKeyId = (await keyIds()).find((id) => !idsBefore.includes(id))!
    // Its row names its scopes and the fee its orders pay.
    expect(await page.locator(`[data-key="${orderKeyId}"]`).textContent()).toMatch(/cashout.*fee \d/)
    const order = await json(await fetch(`${node.deskUrl}${v1}/cashout/orders`, {
      method: "POST", headers: { "content-type": "application/json", "x-api-key": orderKey }, body: JSON.stringify({ amount: "12", chain: "ethereum" })
    }))
    expect(order.status, JSON.stringify(order.body)).toBe(201)
    const card = page.locator(`[data-order="${order.body.shortRef}"]`)
    await card.waitFor({ timeout: 10_000 })
    expect(await card.textContent()).toContain(order.body.depositAddress)
    const customer = await deskCustomer(node, db.url, "SUSD", 1_200_000_000n)
    const depositTxid = await customer.send(order.body.depositAddress, 1_200_000_000n)
    await card.locator(`[data-txid="${depositTxid}"]`).waitFor({ state: "attached", timeout: 30_000 })
    await card.getByText("History and transactions").click()
    await expect.poll(() => card.locator("ol.history li").count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(2)
    expect(await card.locator("ol.history").textContent()).toContain("deposit seen")
    await screenshot(page, "desk-app")
    expect(await unlabelledControls(page)).toEqual([])

    // Revoked from the page: gone from the list, refused by the partner API.
    await page.locator(`[data-key="${orderKeyId}"]`).getByRole("button", { name: /^Revoke/ }).click()
    await page.getByText("The key was revoked on every node.").waitFor()
    // The notice comes as the revoke is answered; the list is read again after it.
    await expect.poll(() => page.locator(`[data-key="${orderKeyId}"]`).count(), { timeout: 10_000 }).toBe(0)
    expect((await fetch(`${node.deskUrl}${v1}/key`, { headers: { "x-api-key": orderKey } })).status).toBe(401)
    expect(errors).toEqual([])
    await context.close()
  })

  it("shows an expired link code as a sentence with a way to get a new one", { timeout: 30_000 }, async () => {
    const context = await browser.context({ phone: true })
    const page = await context.newPage()
    await signInPage(page, node.deskUrl, makeWallet())
    await page.getByRole("button", { name: "Link a wallet" }).click()
    const url = (await page.locator(".link-qr .qr").getAttribute("data-qr"))!
    await sql(`UPDATE link_tokens SET status = 'expired' WHERE token_hash = encode(sha256('${new URL(url).searchParams.get("token")}'::bytea), 'hex')`)
    await page.getByText("This link code has expired").waitFor({ timeout: 10_000 })
    await screenshot(page, "desk-link-expired-phone")
    await page.getByRole("button", { name: "Get a new code" }).click()
    await expect.poll(() => page.locator(".link-state").getAttribute("data-state"), { timeout: 25_000 }).toBe("waiting")
    await context.close()
  })

  it("serves the wallet-link page in the app's design with its QR and an Open in wallet link, readable at phone width; /favicon.ico on every listener", { timeout: 30_000 }, async () => {
    const issued = await inNode(issueDeskLinkToken({ allowRebind: false }))
    const context = await browser.context({ phone: true })
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    const answer = await page.goto(issued.url)
    expect(answer!.headers()).toMatchObject({ "content-security-policy": expect.stringContaining("default-src 'none'"), "referrer-policy": "no-referrer" })
    expect(await page.locator("h1").textContent()).toBe(`Link your wallet to ${node.deskUrl}`)
    expect(await page.locator(".qr svg").count()).toBe(1)
    expect(await page.locator(".qr").getAttribute("data-qr")).toBe(issued.url)
    expect(await page.getByRole("link", { name: "Open in wallet" }).getAttribute("href")).toBe(`shardline-wallet://link?url=${encodeURIComponent(issued.url)}`)
    // The wallet's block is still there, the manifest as JSON.
    const manifest = JSON.parse((await page.locator("script[type=wl-link-xpubs]").textContent())!)
    expect(manifest).toMatchObject({ type: "wl-link-xpubs", callback_url: issued.url })
    expect(await computedStyle(page.locator("section"), "borderRadius")).toBe("12px")
    expect(await fitsWidth(page)).toBe(true)
    await screenshot(page, "desk-wallet-link-phone")
    expect(errors).toEqual([])
    await context.close()
    for (const base of [node.baseUrl, node.deskUrl, node.socialUrl]) {
      const icon = await fetch(`${base}/favicon.ico`)
      expect(icon.status).toBe(200)
      expect(icon.headers.get("content-type")).toBe("image/x-icon")
      expect([...new Uint8Array(await icon.arrayBuffer()).subarray(0, 4)]).toEqual([0, 0, 1, 0])
    }
  })

  it("shows an expired sign-in challenge as a sentence, and sends a revoked session back to sign-in", { timeout: 30_000 }, async () => {
    const context = await browser.context()
    const page = await context.newPage()
    await page.goto(`${node.deskUrl}/app/sign-in`)
    const id = await page.locator("[data-challenge]").getAttribute("data-challenge")
    await sql(`UPDATE signin_challenges SET expires_at = now() - interval '1 second' WHERE id = '${id}'`)
    await page.getByText("This sign-in code has expired").waitFor({ timeout: 10_000 })

    const wallet = makeWallet()
    await signInPage(page, node.deskUrl, wallet)
    await page.locator(".who").waitFor()
    await sql(`UPDATE web_sessions SET revoked_at = now() WHERE service = 'desk' AND address = '${wallet.addresses.p2pkh}'`)
    await expect.poll(async () => {
      await page.goto(`${node.deskUrl}/app/`)
      await page.waitForLoadState("networkidle")
      return new URL(page.url()).pathname
    }, { timeout: 10_000 }).toBe("/app/sign-in")
    await context.close()
  })

  it("a wallet that signed in is its own account: another member cannot link it (409), and the session routes need a session", async () => {
    const wallet = makeWallet()
    const session = await signInWithWallet(node.deskUrl, wallet, "sl_desk")
    const other = await inNode(issueDeskLinkToken({ allowRebind: false }))
    const refused = await walletLinks(other.url, wallet)
    expect(refused).toMatchObject({ status: 409, body: { error: { code: "wallet_linked" } } })
    // Its own account links it.
    const qr = await json(await fetch(`${node.deskUrl}/api/app/wallet-link`, {
      method: "POST", headers: { authorization: `Bearer ${session.token}`, "content-type": "application/json" }, body: "{}"
    }))
    expect(qr.status).toBe(201)
    expect((await walletLinks(qr.body.url, wallet)).status).toBe(200)
    const state = await json(await fetch(`${node.deskUrl}/api/app/wallet-link/${qr.body.challengeId}`, { headers: { authorization: `Bearer ${session.token}` } }))
    expect(state.body).toMatchObject({ status: "linked", wallet: { signingAddress: wallet.addresses.p2pkh } })
    // No session: 401 in the desk's shape; a cookie-session change from another site: 403.
    expect(await json(await fetch(`${node.deskUrl}/api/app/keys`))).toMatchObject({ status: 401, body: { error: { code: "invalid_session" } } })
    const crossSite = await fetch(`${node.deskUrl}/api/app/keys`, {
      method: "POST", headers: { cookie: session.cookie, "content-type": "text/plain", origin: "http://evil.example" }, body: JSON.stringify({ scopes: ["cashout"] })
    })
    expect(await json(crossSite)).toMatchObject({ status: 403, body: { error: { code: "cross_site_refused" } } })
    // Another member's QR is not found.
    const stranger = await signInWithWallet(node.deskUrl, makeWallet(), "sl_desk")
    const theirs = { authorization: `Bearer ${stranger.token}` }
    expect((await fetch(`${node.deskUrl}/api/app/wallet-link/${qr.body.challengeId}`, { headers: theirs })).status).toBe(404)
    // Bad input is answered in the desk's shape, never a 500.
    const answers = async (path: string, init: RequestInit = {}) => json(await fetch(`${node.deskUrl}${path}`, { ...init, headers: { ...theirs, "content-type": "application/json" } }))
    expect(await answers("/api/app/rewards")).toMatchObject({ status: 404, body: { error: { code: "not_found", message: expect.stringContaining("No wallet is linked") } } })
    expect(await answers("/api/app/rewards?days=0")).toMatchObject({ status: 400, body: { error: { code: "invalid_parameter" } } })
    expect(await answers("/api/app/keys/not-a-key-id", { method: "DELETE" })).toMatchObject({ status: 404, body: { error: { code: "not_found" } } })
    expect(await answers("/api/app/keys", { method: "POST", body: JSON.stringify({ scopes: ["everything"] }) })).toMatchObject({ status: 400 })
    expect(await answers("/api/app/keys", { method: "POST", body: JSON.stringify({ scopes: [] }) })).toMatchObject({ status: 400 })
    expect(await answers("/api/app/payout-address", { method: "POST", body: JSON.stringify({ payoutAddress: "T".repeat(34) }) }))
      .toMatchObject({ status: 400, body: { error: { code: "invalid_parameter", message: expect.stringContaining("payoutAddress") } } })
    // A key of one member is not another's to revoke.
    const mine = await answers("/api/app/keys", { method: "POST", body: JSON.stringify({ scopes: ["wrap"] }) })
    expect(mine.status).toBe(201)
    const revokeAsOwner = await json(await fetch(`${node.deskUrl}/api/app/keys/${mine.body.id}`, { method: "DELETE", headers: { authorization: `Bearer ${session.token}` } }))
    expect(revokeAsOwner.status).toBe(404)
    expect((await answers(`/api/app/keys/${mine.body.id}`, { method: "DELETE" })).status).toBe(200)
  })

  it("refuses every cookie-session change sent as another site would, in the desk's error shape", { timeout: 40_000 }, async () => {
    const writes = sessionWrites(DeskApi, DeskSessionAuth)
    // The app's own writes are among them (keys, wallet link, payout address, sign-out, sessions).
    expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual(expect.arrayContaining([
      "POST /api/app/keys", "POST /api/app/wallet-link", "POST /api/app/payout-address", "POST /api/public/auth/sign-out",
      expect.stringMatching(/^DELETE \/api\/app\/keys\//), expect.stringMatching(/^DELETE \/api\/public\/v1\/sessions\//)
    ]))
    const me = await signInWithWallet(node.deskUrl, makeWallet(), "sl_desk")
    for (const answer of await crossSiteAttempts(node.deskUrl, writes, me.cookie)) {
      expect(answer, JSON.stringify(answer)).toMatchObject({ status: 403, body: { error: { code: "cross_site_refused", message: expect.stringMatching(/\w+ \w+/) } } })
    }
    // The session still works: nothing above signed it out.
    expect((await fetch(`${node.deskUrl}/api/app/keys`, { headers: { cookie: me.cookie } })).status).toBe(200)
  })
})
