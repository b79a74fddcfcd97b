// Login CSRF on the shared wallet sign-in (issue 24 point 5): an attacker signs in with their own
// wallet and keeps the one-time token; a page of theirs then posts it to wallet-exchange from the
// victim's browser, which would hold a session of the attacker's account (and upload, post or fund
// as the attacker, unknowingly). On each of the three listeners such a post is refused in the
// service's error shape, sets no session cookie and leaves the token unused; a real browser's
// auto-submitted form from another site gets no session; a program (no Origin, JSON) still signs in.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { launchBrowser, type TestBrowser } from "../support/browser.ts"
import { makeWallet } from "../support/linkWallet.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { authUrl, awaitSignInReady, signedToken } from "../support/walletSignIn.ts"

let db: TestDatabase
let node: RunningNode
let browser: TestBrowser

beforeAll(async () => {
  db = await createTestDatabase("login_csrf")
  ;[node, browser] = await Promise.all([startNode(db.url, { SHARDLINE_MESSAGE_POLL_MS: "200" }), launchBrowser()])
  await Promise.all([node.baseUrl, node.deskUrl, node.socialUrl].map((u) => awaitSignInReady(u)))
}, 150_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await db?.drop()
})

const listeners = () => [
  { name: "exchange", url: node.baseUrl, prefix: "sl_exchange", refusal: { code: -2032 } },
  { name: "desk", url: node.deskUrl, prefix: "sl_desk", refusal: { error: { code: "cross_site_refused" } } },
  { name: "social", url: node.socialUrl, prefix: "sl", refusal: { error: { code: "cross_site_refused" } } }
]

const evil = "http://evil.example"

describe("wallet-exchange refuses another site's page (login CSRF)", () => {
  for (const name of ["exchange", "desk", "social"]) {
    it(`${name}: refused by headers and body kind, no cookie set, token still unused; a program still signs in`, { timeout: 60_000 }, async () => {
      const l = listeners().find((x) => x.name === name)!
      const other = listeners().find((x) => x.name !== name)!
      const token = await signedToken(l.url, makeWallet(), l.prefix)
      const json = { "content-type": "application/json" }
      const attempts: ReadonlyArray<{ what: string; headers: Record<string, string>; body: string }> = [
        { what: "form post from another site", headers: { "content-type": "application/x-www-form-urlencoded", origin: evil, "sec-fetch-site": "cross-site" }, body: `token=${token}` },
        { what: "JSON from another site (Origin only)", headers: { ...json, origin: evil }, body: JSON.stringify({ token }) },
        // Another port of this host: the same site for cookies, another origin.
        { what: "JSON from another listener's page", headers: { ...json, origin: other.url, "sec-fetch-site": "same-site" }, body: JSON.stringify({ token }) },
        { what: "text/plain form body without Origin", headers: { "content-type": "text/plain" }, body: `{"token":"${token}","x":"="}` },
        { what: "urlencoded body without Origin", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `token=${token}` }
      ]
      for (const a of attempts) {
        const r = await fetch(authUrl(l.url, "wallet-exchange"), { method: "POST", headers: a.headers, body: a.body })
        const body = await r.json()
        if (a.headers["content-type"] === "text/plain") {
          // A text/plain body is not decoded as JSON by this route (400 in the service's shape) or is refused as a form body (403): no session either way.
          expect([400, 403], a.what).toContain(r.status)
          expect(body, a.what).toMatchObject(l.name === "exchange" ? { code: expect.any(Number), msg: expect.any(String) } : { error: { code: expect.any(String) } })
        } else {
          expect({ what: a.what, status: r.status, body }).toMatchObject({ what: a.what, status: 403, body: l.refusal })
        }
        expect(r.headers.getSetCookie().filter((c) => c.startsWith(`${l.prefix}_session=`)), a.what).toEqual([])
      }
      // The service's own page (same origin) and a program (no Origin) exchange it: the token was never spent above.
      const own = await fetch(authUrl(l.url, "wallet-exchange"), { method: "POST", headers: { ...json, origin: l.url, "sec-fetch-site": "same-origin" }, body: JSON.stringify({ token }) })
      expect(own.status, await own.clone().text()).toBe(200)
      expect(own.headers.getSetCookie().some((c) => c.startsWith(`${l.prefix}_session=`))).toBe(true)
      const program = await fetch(authUrl(l.url, "wallet-exchange"), { method: "POST", headers: json, body: JSON.stringify({ token: await signedToken(l.url, makeWallet(), l.prefix) }) })
      expect(program.status).toBe(200)
    })
  }

  it("a real browser on another site's page auto-submitting the attacker's token gets no session on any listener", { timeout: 90_000 }, async () => {
    for (const l of listeners()) {
      const token = await signedToken(l.url, makeWallet(), l.prefix)
      const context = await browser.context()
      // The attacker's page: a form posting the token as soon as it loads, as a plain form and as the text/plain JSON trick.
      await context.route(`${evil}/**`, (route) => {
        const plain = new URL(route.request().url()).pathname === "/plain"
        const input = plain ? `<input type="hidden" name='{"token":"${token}","x":"' value='"}'>` : `<input type="hidden" name="token" value="${token}">`
        return route.fulfill({
          contentType: "text/html",
          body: `<!doctype html><form method="POST" action="${authUrl(l.url, "wallet-exchange")}" enctype="${plain ? "text/plain" : "application/x-www-form-urlencoded"}">${input}</form><script>document.forms[0].submit()</script>`
        })
      })
      const page = await context.newPage()
      for (const path of ["/form", "/plain"]) {
        await page.goto(`${evil}${path}`)
        await page.waitForURL(authUrl(l.url, "wallet-exchange"), { timeout: 15_000 })
        const body = JSON.parse(await page.locator("body").innerText())
        // The urlencoded form is refused as cross-site; the text/plain one already fails to decode as JSON (400) or is refused (403).
        expect({ listener: l.name, path, body }).toMatchObject({ listener: l.name, path, body: path === "/form" ? l.refusal : {} })
      }
      expect((await context.cookies()).filter((c) => c.name === `${l.prefix}_session`), l.name).toEqual([])
      // The token was not spent: it still trades for a session, proving the refusal came first.
      const r = await fetch(authUrl(l.url, "wallet-exchange"), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) })
      expect(r.status, l.name).toBe(200)
      await context.close()
    }
  })
})
