// The pure parts of handing a member-signed action to the wallet app and of the wallet-link page:
// the signing code (good for its own request only, under its own key) and the Accept negotiation
// (a browser gets the page; no Accept, */* and JSON keep the JSON).
import { randomBytes, randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { prefersHtml } from "../../../src/platform/webapp/publicPages.ts"
import { requestOfSigningToken, signingDeepLink, signingToken, signingUrl } from "../../../src/social/posts/walletSigning.ts"

describe("signing code", () => {
  const key = randomBytes(32)
  it("names its request and nothing else", () => {
    const id = randomUUID()
    const token = signingToken(key, id)
    expect(token).toMatch(/^[0-9a-f-]{36}\.[0-9a-f]{32}$/)
    expect(requestOfSigningToken(key, token)).toBe(id)
    // Another request's id with this MAC, another key, a changed MAC, junk: none is a code.
    expect(requestOfSigningToken(key, `${randomUUID()}.${token.split(".")[1]}`)).toBeUndefined()
    expect(requestOfSigningToken(randomBytes(32), token)).toBeUndefined()
    expect(requestOfSigningToken(key, `${token.slice(0, -1)}${token.endsWith("0") ? "1" : "0"}`)).toBeUndefined()
    for (const junk of ["", ".", id, `${id}.`, `${token}.x`, `x.${token.split(".")[1]}`, `${id}.ZZ`]) expect(requestOfSigningToken(key, junk), junk).toBeUndefined()
  })
  it("travels in the wallet's deep link as a URL", () => {
    const url = signingUrl("http://127.0.0.1:8280", signingToken(key, randomUUID()))
    const link = signingDeepLink(url)
    expect(link.startsWith("shardline-wallet://sign?url=")).toBe(true)
    expect(new URL(link).searchParams.get("url")).toBe(url)
  })
})

describe("prefersHtml", () => {
  it("is true for a browser's Accept", () => {
    expect(prefersHtml("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8")).toBe(true)
    expect(prefersHtml("text/html")).toBe(true)
    expect(prefersHtml("application/json;q=0.5, text/html")).toBe(true)
  })
  it("is false for wallets and programs", () => {
    for (const accept of [undefined, "", "*/*", "application/json", "application/json, text/html", "text/html;q=0.5, application/json", "text/html;q=0", "application/*, text/html;q=0.9"]) {
      expect(prefersHtml(accept), String(accept)).toBe(false)
    }
  })
})
