// Outbound callbacks, the pure parts: the signature a receiver checks, which targets the desk
// refuses to call without SHARDLINE_CALLBACK_ALLOW_HTTP, and exact amounts in the JSON body.
import { describe, expect, it } from "vitest"
import { callbackBody } from "../../../src/desk/callbacks/CallbackSender.ts"
import { callbackHeaders, signatureOf, verifyCallback } from "../../../src/desk/callbacks/callbackSignature.ts"
import { guardedLookup, isPublicAddress, targetRefusal } from "../../../src/desk/callbacks/callbackTarget.ts"
import { hmacSha256Hex } from "../../../src/crypto/hmac.ts"

describe("callback signature", () => {
  it("is sha256= and the hex HMAC of timestamp.body under the signing secret", () => {
    const body = `{"type":"payout_sent"}`
    expect(signatureOf("whsec_x", 1_700_000_000, body)).toBe(`sha256=${hmacSha256Hex("whsec_x", `1700000000.${body}`)}`)
    const h = callbackHeaders("whsec_x", "payout_sent", 1_700_000_000, body)
    expect(h).toMatchObject({ "x-svc-timestamp": "1700000000", "x-svc-event": "payout_sent", "content-type": "application/json" })
    const check = (secret: string, raw: string, now: number) => verifyCallback(secret, { timestamp: h["x-svc-timestamp"], signature: h["x-svc-signature"] }, raw, now)
    expect(check("whsec_x", body, 1_700_000_100)).toBe("ok")
    expect(check("whsec_y", body, 1_700_000_100)).toBe("bad-signature")
    expect(check("whsec_x", `${body} `, 1_700_000_100)).toBe("bad-signature")
    expect(check("whsec_x", body, 1_700_000_301)).toBe("stale")
    expect(verifyCallback("whsec_x", { timestamp: "soon", signature: h["x-svc-signature"] }, body, 0)).toBe("bad-signature")
    expect(verifyCallback("whsec_x", { timestamp: "1700000000", signature: undefined }, body, 1_700_000_000)).toBe("bad-signature")
  })
})

describe("callback targets", () => {
  it("tells public addresses from private, loopback, link-local and special ones", () => {
    for (const a of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.4.4"]) expect(isPublicAddress(a), a).toBe(true)
    for (const a of ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1",
      "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "not an ip"]) {
      expect(isPublicAddress(a), a).toBe(false)
    }
  })

  it("refuses http, private literals and localhost unless http is allowed", () => {
    const u = (s: string) => new URL(s)
    expect(targetRefusal(u("https://example.com/hook"), false)).toBeUndefined()
    expect(targetRefusal(u("http://example.com/hook"), false)).toMatch(/https/)
    expect(targetRefusal(u("https://127.0.0.1/hook"), false)).toMatch(/not a public address/)
    expect(targetRefusal(u("https://[::1]:8443/hook"), false)).toMatch(/not a public address/)
    expect(targetRefusal(u("https://169.254.169.254/latest"), false)).toMatch(/not a public address/)
    expect(targetRefusal(u("https://localhost/hook"), false)).toMatch(/localhost/)
    expect(targetRefusal(u("http://127.0.0.1:9/hook"), true)).toBeUndefined()
    expect(targetRefusal(u("ftp://example.com/"), true)).toMatch(/https/)
  })

  it("refuses at connect time a host name that resolves to a private address", async () => {
    const look = (allow: boolean) => new Promise<{ code?: string; address?: unknown }>((resolve) =>
      guardedLookup(allow)("localhost", {}, (err, address) => resolve(err === null ? { address } : { code: err.code })))
    expect(await look(false)).toEqual({ code: "ECALLBACKTARGET" })
    expect((await look(true)).address).toMatch(/^(127\.0\.0\.1|::1)$/)
  })
})

describe("callback body", () => {
  it("writes amounts as JSON numbers with their exact digits", () => {
    const text = callbackBody("e1", {
      type: "payout_sent",
      message: "paid",
      amount: { exact: "1234567890.123456789012" },
      chain: "base",
      txid: "0xabc",
      occurredAt: "2026-11-24T00:00:00.000Z",
      order: { id: "o1", status: "released", payoutAmount: { exact: "0.10" } }
    })
    expect(text).toBe(`{"eventId":"e1","type":"payout_sent","message":"paid","amount":1234567890.123456789012,"chain":"base","txid":"0xabc",` +
      `"occurredAt":"2026-11-24T00:00:00.000Z","order":{"id":"o1","status":"released","payoutAmount":0.10}}`)
    expect(JSON.parse(text).order.payoutAmount).toBe(0.1)
    expect(() => callbackBody("e", { type: "x", message: "", amount: { exact: "1e5" }, chain: "", txid: "", occurredAt: "", order: { id: "", status: "", payoutAmount: { exact: "1" } } })).toThrow()
  })
})
