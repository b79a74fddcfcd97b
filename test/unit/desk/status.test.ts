// GET /api/public/status from the running system (issue 23.9): which spec parts are live follows
// from the registry, the payout chains, the reward tokens and the webhook secrets; the overall
// status from the pegs, the heartbeats and the attestation's age; the cadence and the queue depth
// are whatever the node was given. Nothing in the body is a constant list.
import { describe, expect, it } from "vitest"
import { reservesReport } from "../../../src/desk/reserves/reserves.ts"
import { cadenceOf, liveParts, type StatusInputs, statusBody } from "../../../src/desk/http/transparencyBodies.ts"
import { defaultTokens } from "../../../src/desk/tokens/registry.ts"

const now = Date.parse("2026-11-28T12:00:00.000Z")
const issued = defaultTokens.map((t, i) => ({ ...t, propertyId: 6 + i, live: true }))
const facts = { payoutChains: ["ethereum", "base", "bsc"], rewardProperties: [6, 7], webhookSecrets: { "partner-a": true, "partner-b": false } }
const inputs = (over: Partial<StatusInputs> = {}): StatusInputs => ({
  now,
  tokens: issued,
  report: reservesReport([], [], new Date(now), 0),
  heartbeats: [{ job: "attestor", at: new Date(now).toISOString(), ok: true, detail: "" }],
  lastAttestationAt: new Date(now - 30 * 60_000).toISOString(),
  publicKey: "00".repeat(32),
  attestationIntervalMs: 3_600_000,
  redemptionQueueDepth: 4,
  live: facts,
  ...over
})

describe("desk status", () => {
  it("lists as not live only what the running system lacks: here partner B's webhook secret", () => {
    const body = statusBody(inputs())
    expect(body.notYetLive).toEqual(["webhooks/partner-b"])
    expect(body.live).toMatchObject({ cashout: true, "stables/orders": true, "wrap/orders": true, "wallet-link": true, rewards: true, callbacks: true, "webhooks/partner-a": true })
    expect(body).toMatchObject({ status: "ok", redemptionQueueDepth: 4, attestationCadence: "hourly", attestationIntervalMs: 3_600_000 })
  })
  it("turns order kinds off without a live token of their kind or a chain to pay on, rewards without a token", () => {
    const wrappedOnly = issued.map((t) => (t.kind === "dollar" ? { ...t, live: false } : t))
    expect(liveParts(wrappedOnly, facts)).toMatchObject({ cashout: false, "stables/orders": false, "wrap/orders": true })
    expect(liveParts(issued, { ...facts, payoutChains: [] })).toMatchObject({ cashout: false, "stables/orders": false, "wrap/orders": true })
    const unissued = issued.map((t) => (t.kind === "wrapped" ? { ...t, propertyId: null } : t))
    expect(liveParts(unissued, facts)["wrap/orders"]).toBe(false)
    expect(liveParts(issued, { ...facts, rewardProperties: [] }).rewards).toBe(false)
  })
  it("is degraded by a failed heartbeat, an attestation more than two cadences old, or a peg below 1", () => {
    expect(statusBody(inputs({ heartbeats: [{ job: "reserves-scan", at: null, ok: false, detail: "scan failed" }] })).status).toBe("degraded")
    expect(statusBody(inputs({ lastAttestationAt: new Date(now - 2 * 3_600_000 - 1).toISOString() })).status).toBe("degraded")
    expect(statusBody(inputs({ lastAttestationAt: null })).status).toBe("ok")
    const short = reservesReport([], [{ code: "SUSD", kind: "dollar", baseAsset: "USD", propertyId: 6, circulating: 100_000_000n }], new Date(now), 0)
    const body = statusBody(inputs({ report: short }))
    expect(body.pegHealth[0]).toEqual({ asset: "USD", collateralization: 0, healthy: false })
    expect(body.status).toBe("degraded")
  })
  it("says the cadence it runs at", () => {
    expect(cadenceOf(3_600_000)).toBe("hourly")
    expect(cadenceOf(3000)).toBe("every 3 s")
    expect(statusBody(inputs({ attestationIntervalMs: 3000 })).attestationCadence).toBe("every 3 s")
  })
})
