// The pure parts of wallet identity: the sampling rule, the by-key BIP-137 check over every header
// kind, EVM payout addresses (checked against @scure/bip32, another BIP-32 implementation), the
// desk envelope check and the sign-in message.
import { randomBytes } from "node:crypto"
import { Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { HDKey, publicKeyToAddress } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { unwrap } from "../../../harness/either.ts"
import { evmPayoutAddress } from "../../../src/chain/evm/payoutAddress.ts"
import { signingKeyFromSeed } from "../../../src/chain/keys.ts"
import { verifyMessageByKey } from "../../../src/chain/message.ts"
import { averageOf, MISSING_SLOTS_MAX, nextSlotAt, planSampling, windowSize } from "../../../src/desk/identity/sampling.ts"
import { checkEnvelope, issuedAtSkewMs, manifestOf, postedLinkToken } from "../../../src/desk/identity/walletLink.ts"
import { signInMessage } from "../../../src/platform/signin/challenge.ts"
import { deskPayload, makeWallet, type SignKind } from "../../support/linkWallet.ts"

const hour = 3_600_000

describe("sampling rule", () => {
  it("samples a slot whose timer fires on time and schedules the next", () => {
    expect(planSampling({ firedSlotMs: 10 * hour, lastRecordedMs: 9 * hour, nowMs: 10 * hour + 1200, intervalMs: hour }))
      .toEqual({ missing: [], sample: 10 * hour, next: 11 * hour })
  })
  it("records slots passed while down as missing and samples the current one if its window is open", () => {
    expect(planSampling({ firedSlotMs: 10 * hour, lastRecordedMs: 9 * hour, nowMs: 13 * hour + 60_000, intervalMs: hour }))
      .toEqual({ missing: [10 * hour, 11 * hour, 12 * hour], sample: 13 * hour, next: 14 * hour })
  })
  it("records the current slot as missing too when more than half an interval has passed", () => {
    expect(planSampling({ firedSlotMs: 10 * hour, lastRecordedMs: 9 * hour, nowMs: 10 * hour + 0.6 * hour, intervalMs: hour }))
      .toEqual({ missing: [10 * hour], sample: undefined, next: 11 * hour })
    // Exactly half an interval late still samples.
    expect(planSampling({ firedSlotMs: 10 * hour, lastRecordedMs: undefined, nowMs: 10.5 * hour, intervalMs: hour }).sample).toBe(10 * hour)
  })
  it("does nothing new for a stale timer of a slot already recorded", () => {
    expect(planSampling({ firedSlotMs: 10 * hour, lastRecordedMs: 10 * hour, nowMs: 10 * hour + 5000, intervalMs: hour }))
      .toEqual({ missing: [], sample: undefined, next: 11 * hour })
  })
  it("bounds the missing slots one firing writes after a very long outage", () => {
    const plan = planSampling({ firedSlotMs: 0, lastRecordedMs: undefined, nowMs: 5 * 366 * 24 * hour + 1000, intervalMs: hour })
    expect(plan.missing).toHaveLength(MISSING_SLOTS_MAX)
    expect(plan.missing.at(-1)).toBe(5 * 366 * 24 * hour - hour)
    expect(plan.sample).toBe(5 * 366 * 24 * hour)
  })
  it("aligns slots and sizes the gap window", () => {
    expect(nextSlotAt(hour + 1, hour)).toBe(2 * hour)
    expect(nextSlotAt(2 * hour, hour)).toBe(2 * hour)
    expect(windowSize([])).toBe(20)
    expect(windowSize([0, 3])).toBe(24)
    expect(windowSize([19])).toBe(40)
  })
  it("averages the samples taken, leaves missing ones out, in base units", () => {
    expect(averageOf([100n, null, 200n, 301n])).toEqual({ sampleCount: 3, missingCount: 1, average: 200n })
    expect(averageOf([null, null])).toEqual({ sampleCount: 0, missingCount: 2, average: 0n })
    expect(averageOf([10n ** 30n, 10n ** 30n]).average).toBe(10n ** 30n)
  })
})

describe("BIP-137 by key", () => {
  const seed = randomBytes(32)
  const wallet = makeWallet(seed)
  const key = unwrap(signingKeyFromSeed(seed))
  it.each(["compressed", "uncompressed", "p2sh-p2wpkh", "p2wpkh", "electrum-p2sh", "electrum-p2wpkh"] as const)("accepts %s", (kind: SignKind) => {
    const r = verifyMessageByKey({ publicKey: key.publicKey, message: "hello", signature: wallet.sign("hello", kind) })
    expect(r.valid).toBe(true)
  })
  it("refuses another message, another key and garbage", () => {
    expect(verifyMessageByKey({ publicKey: key.publicKey, message: "other", signature: wallet.sign("hello") }).valid).toBe(false)
    expect(verifyMessageByKey({ publicKey: key.publicKey, message: "hello", signature: makeWallet().sign("hello") }).valid).toBe(false)
    expect(verifyMessageByKey({ publicKey: key.publicKey, message: "hello", signature: "!!" }).valid).toBe(false)
    expect(verifyMessageByKey({ publicKey: Uint8Array.of(1, 2, 3), message: "hello", signature: wallet.sign("hello") }).valid).toBe(false)
  })
})

describe("EVM payout address", () => {
  it("takes m/0/0 of an extended public key, as another BIP-32 implementation does", () => {
    for (let i = 0; i < 5; i++) {
      const root = HDKey.fromMasterSeed(randomBytes(32)).derive("m/44'/60'/0'")
      const uncompressed = ecc.pointCompress(root.derive("m/0/0").publicKey!, false)
      const expected = publicKeyToAddress(`0x${Buffer.from(uncompressed).toString("hex")}`)
      expect(Either.getOrThrow(evmPayoutAddress(root.publicExtendedKey))).toBe(expected)
    }
  })
  it("checksums a plain address, and refuses a bad checksum, a private key and garbage", () => {
    expect(Either.getOrThrow(evmPayoutAddress("0x52908400098527886e0f7030069857d2e4169ee7"))).toBe("0x52908400098527886E0F7030069857D2E4169EE7")
    expect(Either.isLeft(evmPayoutAddress("0x52908400098527886E0F7030069857D2E4169Ee7"))).toBe(true)
    expect(Either.isLeft(evmPayoutAddress(HDKey.fromMasterSeed(randomBytes(32)).privateExtendedKey))).toBe(true)
    expect(Either.isLeft(evmPayoutAddress("xpub"))).toBe(true)
    expect(Either.isLeft(evmPayoutAddress("x".repeat(500)))).toBe(true)
  })
})

describe("desk envelope check", () => {
  const facts = { challengeId: "c".repeat(22), issuedAtMs: 1_700_000_000_000, expiresAtMs: 1_700_000_300_000, allowRebind: false }
  const manifest = manifestOf(facts, { from: "https://desk.example", callbackUrl: "https://desk.example/api/public/v1/wallet-link?token=t" })
  const wallet = makeWallet()
  const payload = deskPayload(manifest, wallet)
  const now = facts.issuedAtMs + 60_000
  const signedAt = (issuedAt: string, nowMs = now) => {
    const own = { ...payload, issued_at: issuedAt }
    return checkEnvelope({ payload: own, signature: wallet.signJson(own), address: wallet.addresses.p2pkh }, manifest, nowMs)
  }
  const at = (ms: number) => new Date(ms).toISOString()
  it("accepts the manifest's payload signed by the xpub's m/0/0 key", () => {
    const r = checkEnvelope({ payload, signature: wallet.signJson(payload), address: wallet.addresses.p2pkh }, manifest, now)
    expect(Either.getOrThrow(r).signingAddress).toBe(wallet.addresses.p2pkh)
  })
  it("accepts a wallet's own issued_at within the token's life and the clock skew", () => {
    for (const ms of [facts.issuedAtMs + 30_000, now, facts.issuedAtMs - issuedAtSkewMs, now + issuedAtSkewMs]) {
      expect(Either.isRight(signedAt(at(ms))), at(ms)).toBe(true)
    }
    // Other ISO 8601 spellings of a time in the window: no milliseconds, an offset.
    expect(Either.isRight(signedAt("2023-11-14T22:14:00Z"))).toBe(true)
    expect(Either.isRight(signedAt("2023-11-14T23:14:00.5+01:00"))).toBe(true)
  })
  it("refuses (401) an issued_at before the token, or ahead of now, beyond the skew", () => {
    for (const ms of [facts.issuedAtMs - issuedAtSkewMs - 1, now + issuedAtSkewMs + 1, facts.expiresAtMs + 10 * 60_000]) {
      const r = signedAt(at(ms))
      expect(Either.isLeft(r) && r.left.status, at(ms)).toBe(401)
      expect(Either.isLeft(r) && r.left.message).toContain("issued_at")
    }
    // After the token's expiry even when our clock says later (a redeem racing the expiry).
    const afterLife = signedAt(at(facts.expiresAtMs + issuedAtSkewMs + 1), facts.expiresAtMs + 10 * issuedAtSkewMs)
    expect(Either.isLeft(afterLife) && afterLife.left.status).toBe(401)
    expect(Either.isRight(signedAt(at(facts.expiresAtMs), facts.expiresAtMs + 10 * issuedAtSkewMs))).toBe(true)
  })
  it.each(["yesterday", "2023-11-14", "2023-11-14 22:14:00Z", "1700000000", ""])("refuses a malformed issued_at %j with 400", (text) => {
    const r = signedAt(text)
    expect(Either.isLeft(r) && r.left.status).toBe(400)
    expect(Either.isLeft(r) && r.left.message).toContain("payload.issued_at")
  })
  it("finds the token in the query, else inside the signed callback_url", () => {
    expect(postedLinkToken("q", "https://desk.example/api/public/v1/wallet-link?token=t")).toBe("q")
    expect(postedLinkToken(undefined, "https://desk.example/api/public/v1/wallet-link?token=t")).toBe("t")
    expect(postedLinkToken(undefined, "https://desk.example/api/public/v1/wallet-link")).toBeUndefined()
    expect(postedLinkToken(undefined, "not a url")).toBeUndefined()
  })
  it.each([
    ["challenge_id", { challenge_id: "d".repeat(22) }],
    ["from", { from: "https://evil.example" }],
    ["callback_url", { callback_url: "https://evil.example/x" }],
    ["exp", { exp: 1 }],
    ["issued_at", { issued_at: "2020-01-01T00:00:00.000Z" }]
  ] as const)("refuses a payload whose %s is not the manifest's (issued_at: outside the link's life), even correctly signed (401)", (field, change) => {
    const other = { ...payload, ...change }
    const r = checkEnvelope({ payload: other, signature: wallet.signJson(other), address: wallet.addresses.p2pkh }, manifest, now)
    expect(Either.isLeft(r) && r.left.status).toBe(401)
    expect(Either.isLeft(r) && r.left.message).toContain(field)
  })
  it("refuses a signing address that is not the xpub's m/0/0 (401) and a bech32 one (400)", () => {
    const stranger = makeWallet()
    const r = checkEnvelope({ payload, signature: stranger.signJson(payload), address: stranger.addresses.p2pkh }, manifest, now)
    expect(Either.isLeft(r) && r.left.status).toBe(401)
    const bech = checkEnvelope({ payload, signature: wallet.signJson(payload, "p2wpkh"), address: wallet.addresses.p2wpkh }, manifest, now)
    expect(Either.isLeft(bech) && bech.left.status).toBe(400)
    expect(Either.isLeft(bech) && bech.left.message).toContain("legacy T")
  })
})

describe("sign-in message", () => {
  it("names the origin, the challenge, its nonce and expiry, and says no payment is involved", () => {
    const m = signInMessage({ id: "A".repeat(22), nonce: "n0nce", origin: "https://social.example", expiresAtMs: 0 })
    expect(m).toBe([
      "https://social.example asks you to sign in with your wallet.",
      `Challenge: ${"A".repeat(22)}`,
      "Nonce: n0nce",
      "Expires: 1970-01-01T00:00:00.000Z",
      "No payment and no transaction: signing only proves you hold this address."
    ].join("\n"))
  })
})
