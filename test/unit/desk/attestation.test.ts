// The attestation rules without I/O: the spec's hash rule on a payload, both signatures, and
// what `desk verify` finds in a series: tampered payloads, a broken chain, a foreign signature,
// a wrong HMAC key, missing rows and missing hours.
import { createHash, createHmac, generateKeyPairSync } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  type AttestationPoint,
  attestationPayload,
  ed25519Sign,
  ed25519Verify,
  hmacSignature,
  HOUR_MS,
  payloadHash,
  rawPublicKeyOf,
  verifySeries
} from "../../../src/desk/attestation/attestation.ts"
import { ratio, reservesReport } from "../../../src/desk/reserves/reserves.ts"

const newKey = () => generateKeyPairSync("ed25519").privateKey.export({ format: "der", type: "pkcs8" }).toString("hex")
const key = newKey()
const publicKey = rawPublicKeyOf(key)
const hmacKey = "issuer-secret"
const t0 = Date.parse("2026-11-24T00:05:00.000Z")

/** A series of `n` rows an hour apart, made the way Attestations.append makes them. */
const series = (n: number, stepMs = HOUR_MS): Array<AttestationPoint> => {
  const out: Array<AttestationPoint> = []
  for (let i = 1; i <= n; i++) {
    const attestedAt = new Date(t0 + (i - 1) * stepMs).toISOString()
    const previous = out.at(-1)?.payload_hash ?? null
    const payload = attestationPayload({ totalReserves: `${i}.5`, collateralization: 1.0000004 }, i, attestedAt, previous)
    const hash = payloadHash(payload)
    out.push({ seq: i, attestedAt, payload, payload_hash: hash, previousPayloadHash: previous, signature: hmacSignature(hmacKey, hash), ed25519Signature: ed25519Sign(key, hash) })
  }
  return out
}

describe("attestation hash rule and signatures", () => {
  it("hashes the canonical JSON: keys sorted at every level, numbers to 6 decimals, non-finite as null", () => {
    const payload = { b: 1.23456789, a: { z: Number.NaN, y: [Infinity, 2.5] }, s: "x" }
    const expected = '{"a":{"y":[null,2.5],"z":null},"b":1.234568,"s":"x"}'
    expect(payloadHash(payload)).toBe(createHash("sha256").update(expected, "utf8").digest("hex"))
    // The signature is the HMAC of the hex hash text, as any HMAC library computes it.
    const hash = payloadHash(payload)
    expect(hmacSignature(hmacKey, hash)).toBe(createHmac("sha256", hmacKey).update(hash).digest("hex"))
    expect(ed25519Verify(publicKey, hash, ed25519Sign(key, hash))).toBe(true)
    expect(ed25519Verify(rawPublicKeyOf(newKey()), hash, ed25519Sign(key, hash))).toBe(false)
    expect(ed25519Verify(publicKey, hash, "00")).toBe(false)
  })

  it("a payload carries the previous hash, seq and time; a JSON round trip hashes the same", () => {
    const [a, b] = series(2)
    expect(b!.payload["previousPayloadHash"]).toBe(a!.payload_hash)
    expect(payloadHash(JSON.parse(JSON.stringify(b!.payload)))).toBe(b!.payload_hash)
  })
})

describe("verifySeries", () => {
  const now = t0 + 2 * HOUR_MS + 60_000

  it("accepts an intact hourly series, HMAC included when the key is given", () => {
    const r = verifySeries(series(3), { publicKey, hmacKey, nowMs: now })
    expect(r).toMatchObject({ rows: 3, ok: true, problems: [], missingHours: [], hmacChecked: true })
  })

  it("finds a tampered payload, a broken chain, a missing row, a foreign key and a wrong HMAC key", () => {
    const s = series(4)
    const tampered = s.map((p) => (p.seq === 2 ? { ...p, payload: { ...p.payload, totalReserves: "999" } } : p))
    expect(verifySeries(tampered, { publicKey, nowMs: now }).problems).toEqual([expect.stringMatching(/^attestation 2: payload_hash .* does not match the payload/)])
    // A re-hashed, re-signed forgery still breaks the chain to the next row... and is not signed by the issuer.
    const forgedPayload = { ...s[1]!.payload, totalReserves: "999" }
    const forgedHash = payloadHash(forgedPayload)
    const forged = s.map((p) => (p.seq === 2 ? { ...p, payload: forgedPayload, payload_hash: forgedHash, ed25519Signature: ed25519Sign(newKey(), forgedHash) } : p))
    expect(verifySeries(forged, { publicKey, nowMs: now }).problems).toEqual([
      "attestation 2: the Ed25519 signature does not verify with the published key",
      "attestation 3: chain broken: previousPayloadHash is not the payload_hash of 2"
    ])
    const gap = verifySeries([s[0]!, s[2]!, s[3]!], { publicKey, nowMs: now })
    expect(gap.problems).toContain("attestation 3: follows 1; rows 2..2 are missing")
    expect(verifySeries(s, { publicKey, hmacKey: "not-the-key", nowMs: now }).problems).toHaveLength(4)
    expect(verifySeries(s.slice(1), { publicKey, nowMs: now }).problems[0]).toMatch(/does not start at 1/)
  })

  it("names every UTC hour without an attestation, the current one only after the grace", () => {
    const s = series(2, 3 * HOUR_MS) // 00:05 and 03:05
    const r = verifySeries(s, { publicKey, nowMs: t0 + 5 * HOUR_MS + 30 * 60_000 }) // 05:35
    expect(r.missingHours).toEqual(["2026-11-24T01:00:00.000Z", "2026-11-24T02:00:00.000Z", "2026-11-24T04:00:00.000Z", "2026-11-24T05:00:00.000Z"])
    expect(r.ok).toBe(false)
    // At 04:05 the 04:00 hour is still within the grace: not missing yet.
    expect(verifySeries(s, { publicKey, nowMs: t0 + 4 * HOUR_MS }).missingHours).toEqual(["2026-11-24T01:00:00.000Z", "2026-11-24T02:00:00.000Z"])
  })
})

describe("reserves report", () => {
  it("sums stablecoins of different decimals exactly, splits cold/hot/deposits, and backs each wrapped token by its coin", () => {
    const report = reservesReport([
      { chain: "ethereum", group: "cold", asset: "USDC", address: "a", amount: 2_500_000n, decimals: 6 },
      { chain: "bsc", group: "hot", asset: "USDC", address: "b", amount: 10n ** 18n, decimals: 18 },
      { chain: "base", group: "deposits", asset: "DAI", address: "c", amount: 1n, decimals: 18 },
      { chain: "btc", group: "cold", asset: "BTC", address: "d", amount: 50_000_000n, decimals: 8 },
      { chain: "ethereum", group: "hot", asset: "ETH", address: "e", amount: 0n, decimals: 18 }
    ], [
      { code: "SUSD", kind: "dollar", baseAsset: "USD", propertyId: 6, circulating: 300_000_000n },
      { code: "XUSD", kind: "dollar", baseAsset: "USD", propertyId: 7, circulating: 100_000_000n },
      { code: "wBTC", kind: "wrapped", baseAsset: "BTC", propertyId: 8, circulating: 25_000_000n },
      { code: "wETH", kind: "wrapped", baseAsset: "ETH", propertyId: 9, circulating: 0n }
    ], new Date(t0), 5)
    expect(report.totalReserves).toBe("3.500000000000000001")
    expect(report.circulatingSupply).toBe("4")
    expect(report.collateralization).toBe(0.875)
    expect(report.coldHot).toEqual({ cold: "2.5", hot: "1", deposits: "0.000000000000000001" })
    expect(report.wrapped).toEqual([
      { asset: "BTC", wrapped: "wBTC", propertyId: 8, reserves: "0.5", wrappedSupply: "0.25", collateralization: 2 },
      { asset: "ETH", wrapped: "wETH", propertyId: 9, reserves: "0", wrappedSupply: "0", collateralization: null }
    ])
    expect(report.breakdown.byChain["bsc"]).toEqual({ USDC: "1" })
    expect(report.breakdown.hotByChain).toEqual({ bsc: { USDC: "1" }, ethereum: { ETH: "0" } })
    expect(ratio(1n, 3n)).toBe(0.333333)
  })
})
