// Reserve attestations, pure: the payload, its hash by the spec's rule, both signatures, and the
// check of a whole series that `desk verify` runs from the public endpoints alone.
//
// The spec's rule (Attestation verification rule): object keys sorted at every level, numbers
// rounded to 6 decimals, non-finite numbers as null (src/crypto/canonicalJson.ts); payload_hash
// is the hex sha256 of that JSON; signature is the hex HMAC-SHA256 of payload_hash (the 64 hex
// characters as UTF-8) with the issuer's secret. Beyond the spec: each payload carries
// `previousPayloadHash` (null for the first), a hash chain; and each row carries an Ed25519
// signature of payload_hash (same bytes) whose public key is published, so anyone can check
// who wrote a row without the HMAC secret.
import { createPrivateKey, createPublicKey, sign, verify } from "node:crypto"
import { type CanonicalValue, canonicalHash } from "../../crypto/canonicalJson.ts"
import { constantTimeEqual, hmacSha256Hex } from "../../crypto/hmac.ts"

export const HOUR_MS = 3_600_000
/** The current hour counts as missing only this long after it began (the timer fires at the top). */
export const CADENCE_GRACE_MS = 10 * 60_000

export type Payload = { readonly [key: string]: CanonicalValue | undefined }

export interface AttestationPoint {
  readonly seq: number
  readonly attestedAt: string
  readonly payload: Payload
  readonly payload_hash: string
  readonly previousPayloadHash: string | null
  readonly signature: string
  readonly ed25519Signature: string
}

/** The payload of attestation `seq`: the reserves report, when, and the hash before it. */
export const attestationPayload = (report: Payload, seq: number, attestedAt: string, previousPayloadHash: string | null): Payload =>
  ({ ...report, version: 1, seq, attestedAt, previousPayloadHash })

export const payloadHash = (payload: Payload): string => canonicalHash(payload)

export const hmacSignature = (key: string | Uint8Array, hash: string): string => hmacSha256Hex(key, hash)

/** Ed25519 keys as stored: the private key PKCS#8 DER (hex), the public key raw 32 bytes (hex). */
export const ed25519Sign = (privatePkcs8Hex: string, hash: string): string =>
  sign(null, Buffer.from(hash, "utf8"), createPrivateKey({ key: Buffer.from(privatePkcs8Hex, "hex"), format: "der", type: "pkcs8" })).toString("hex")

/** SPKI DER prefix of an Ed25519 public key (RFC 8410), before the raw 32 bytes. */
const ED25519_SPKI_PREFIX = "302a300506032b6570032100"

export const ed25519Verify = (publicRawHex: string, hash: string, signatureHex: string): boolean => {
  if (!/^[0-9a-f]{64}$/.test(publicRawHex) || !/^[0-9a-f]{128}$/.test(signatureHex)) return false
  const key = createPublicKey({ key: Buffer.from(ED25519_SPKI_PREFIX + publicRawHex, "hex"), format: "der", type: "spki" })
  return verify(null, Buffer.from(hash, "utf8"), key, Buffer.from(signatureHex, "hex"))
}

export const rawPublicKeyOf = (privatePkcs8Hex: string): string =>
  createPublicKey(createPrivateKey({ key: Buffer.from(privatePkcs8Hex, "hex"), format: "der", type: "pkcs8" }))
    .export({ format: "der", type: "spki" }).subarray(-32).toString("hex")

/** The UTC hour an instant falls in, as ISO text ("2026-11-24T03:00:00.000Z"). */
export const hourOf = (ms: number): string => new Date(Math.floor(ms / HOUR_MS) * HOUR_MS).toISOString()

export interface VerifyOptions {
  /** The published Ed25519 public key (raw, hex). */
  readonly publicKey: string
  /** The issuer's HMAC secret, when the verifier holds it (the issuer's own audit). */
  readonly hmacKey?: string
  readonly nowMs: number
}

export interface VerifyResult {
  readonly rows: number
  readonly first: string | null
  readonly last: string | null
  /** Each broken rule, one line per row and rule. */
  readonly problems: ReadonlyArray<string>
  /** Every UTC hour from the first attestation to now with no attestation in it. */
  readonly missingHours: ReadonlyArray<string>
  readonly hmacChecked: boolean
  readonly ok: boolean
}

/** Checks a whole series (oldest first or not: it is sorted by seq here). */
export const verifySeries = (points: ReadonlyArray<AttestationPoint>, options: VerifyOptions): VerifyResult => {
  const sorted = [...points].sort((a, b) => a.seq - b.seq)
  const problems: Array<string> = []
  const hours = new Set<string>()
  let previous: AttestationPoint | undefined
  for (const p of sorted) {
    const at = `attestation ${p.seq}`
    const hash = payloadHash(p.payload)
    if (hash !== p.payload_hash) problems.push(`${at}: payload_hash ${p.payload_hash} does not match the payload (its hash is ${hash})`)
    if (p.payload["previousPayloadHash"] !== p.previousPayloadHash) problems.push(`${at}: previousPayloadHash differs between the row and its payload`)
    if (previous === undefined) {
      if (p.seq !== 1) problems.push(`${at}: the series does not start at 1 (ask with range=all)`)
      if (p.seq === 1 && p.previousPayloadHash !== null) problems.push(`${at}: the first attestation names a previous hash`)
    } else {
      if (p.seq !== previous.seq + 1) problems.push(`${at}: follows ${previous.seq}; rows ${previous.seq + 1}..${p.seq - 1} are missing`)
      if (p.previousPayloadHash !== previous.payload_hash) problems.push(`${at}: chain broken: previousPayloadHash is not the payload_hash of ${previous.seq}`)
      if (Date.parse(p.attestedAt) < Date.parse(previous.attestedAt)) problems.push(`${at}: attested before ${previous.seq}`)
    }
    if (p.payload["attestedAt"] !== p.attestedAt) problems.push(`${at}: attestedAt differs between the row and its payload`)
    if (!ed25519Verify(options.publicKey, p.payload_hash, p.ed25519Signature)) problems.push(`${at}: the Ed25519 signature does not verify with the published key`)
    if (options.hmacKey !== undefined && !constantTimeEqual(hmacSignature(options.hmacKey, p.payload_hash), p.signature)) {
      problems.push(`${at}: the HMAC signature does not match the issuer's key`)
    }
    hours.add(hourOf(Date.parse(p.attestedAt)))
    previous = p
  }
  const missingHours: Array<string> = []
  if (sorted.length > 0) {
    const start = Math.floor(Date.parse(sorted[0]!.attestedAt) / HOUR_MS) * HOUR_MS
    for (let h = start; h + CADENCE_GRACE_MS <= options.nowMs; h += HOUR_MS) {
      if (!hours.has(hourOf(h))) missingHours.push(hourOf(h))
    }
  }
  return {
    rows: sorted.length,
    first: sorted[0]?.attestedAt ?? null,
    last: sorted.at(-1)?.attestedAt ?? null,
    problems,
    missingHours,
    hmacChecked: options.hmacKey !== undefined,
    ok: problems.length === 0 && missingHours.length === 0
  }
}
