// The attestation series in Postgres (desk_attestations, append-only: triggers refuse UPDATE,
// DELETE and TRUNCATE), its keys, and the one way a row is written: `append`, which numbers it,
// chains it to the row before and signs it, inside one transaction under an advisory lock so
// two writers never fork the chain. An on-demand attestation's row carries its request id
// (unique), so the same request appends once whatever redelivers it.
//
// Keys: the HMAC secret is SHARDLINE_ATTESTATION_KEY, or else generated once and kept sealed
// with the master key (desk_secrets "attestation-hmac", shared by every node through the
// database: a key file in one node's data dir would not be). The Ed25519 key is always
// generated and sealed the same way ("attestation-ed25519"); its public key is published.
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { canonicalJson } from "../../crypto/canonicalJson.ts"
import { DeskConfig } from "../DeskConfig.ts"
import type { SecretBox } from "../../platform/SecretBox.ts"
import { deskSecret } from "../wallets/DeskSecrets.ts"
import { type AttestationPoint, attestationPayload, ed25519Sign, hmacSignature, type Payload, payloadHash, rawPublicKeyOf } from "./attestation.ts"

/** The advisory lock of `append` (keyspace "ATST"). */
const APPEND_LOCK = [0x41545354, 1] as const

export const historyRanges = { "24h": 24, "7d": 24 * 7, "30d": 24 * 30, "90d": 24 * 90 } as const
export type HistoryRange = keyof typeof historyRanges | "all"

interface Row {
  readonly seq: string
  readonly attested_at: Date
  readonly payload: string
  readonly payload_hash: string
  readonly prev_hash: string | null
  readonly signature: string
  readonly ed25519_signature: string
}

const toPoint = (r: Row): AttestationPoint => ({
  seq: Number(r.seq),
  attestedAt: r.attested_at.toISOString(),
  payload: JSON.parse(r.payload) as Payload,
  payload_hash: r.payload_hash,
  previousPayloadHash: r.prev_hash,
  signature: r.signature,
  ed25519Signature: r.ed25519_signature
})

export interface AttestationsShape {
  /** The Ed25519 public key (raw, hex) every row's ed25519Signature verifies with. */
  readonly publicKey: string
  /**
   * Writes the next attestation of `report`, attested now. With `requestId` (an on-demand
   * attestation) a row already written for that request is answered instead: a redelivered
   * request never appends twice.
   */
  readonly append: (report: Payload, requestId?: string) => Effect.Effect<AttestationPoint, SqlError>
  /** The row written for an on-demand request, if any. */
  readonly byRequest: (requestId: string) => Effect.Effect<AttestationPoint | undefined, SqlError>
  readonly latest: Effect.Effect<AttestationPoint | undefined, SqlError>
  /** Oldest first: the last `range` of rows, or every row. */
  readonly history: (range: HistoryRange) => Effect.Effect<ReadonlyArray<AttestationPoint>, SqlError>
}

export class Attestations extends Context.Tag("shardline/desk/Attestations")<Attestations, AttestationsShape>() {}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* DeskConfig
  const hmacKey = Option.isSome(config.attestationKey)
    ? Redacted.value(config.attestationKey.value)
    : (yield* deskSecret("attestation-hmac", () => ({ secret: randomBytes(32).toString("hex"), public: "" }))).secret
  const ed = yield* deskSecret("attestation-ed25519", () => {
    const { privateKey } = generateKeyPairSync("ed25519")
    const pkcs8 = privateKey.export({ format: "der", type: "pkcs8" }).toString("hex")
    return { secret: pkcs8, public: rawPublicKeyOf(pkcs8) }
  })
  // Rows come out with seq as text (a BIGINT past 2^53 stays exact); every ORDER BY names the table's
  // column (desk_attestations.seq): a bare `seq` would sort the text alias, "9" above "10".
  const columns = sql`seq::text AS seq, attested_at, payload, payload_hash, prev_hash, signature, ed25519_signature`

  const byRequest: AttestationsShape["byRequest"] = (requestId) =>
    Effect.map(sql<Row>`SELECT ${columns} FROM desk_attestations WHERE request_id = ${requestId}`, (rows) => rows[0] && toPoint(rows[0]))

  const append: AttestationsShape["append"] = (report, requestId) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${APPEND_LOCK[0]}, ${APPEND_LOCK[1]})`
      // Under the lock: a second writer of the same request waits and then finds this one's row.
      const done = requestId === undefined ? undefined : yield* byRequest(requestId)
      if (done !== undefined) return done
      const [last] = yield* sql<{ seq: string; payload_hash: string }>`SELECT seq::text AS seq, payload_hash FROM desk_attestations ORDER BY desk_attestations.seq DESC LIMIT 1`
      const seq = last === undefined ? 1 : Number(last.seq) + 1
      const attestedAt = new Date().toISOString()
      const payload = attestationPayload(report, seq, attestedAt, last?.payload_hash ?? null)
      const hash = payloadHash(payload)
      const [row] = yield* sql<Row>`INSERT INTO desk_attestations (seq, attested_at, payload, payload_hash, prev_hash, signature, ed25519_signature, request_id)
        VALUES (${seq}, ${attestedAt}, ${canonicalJson(payload)}, ${hash}, ${last?.payload_hash ?? null}, ${hmacSignature(hmacKey, hash)}, ${ed25519Sign(ed.secret, hash)},
          ${requestId ?? null})
        RETURNING ${columns}`
      return toPoint(row!)
    }))

  const latest = Effect.map(sql<Row>`SELECT ${columns} FROM desk_attestations ORDER BY desk_attestations.seq DESC LIMIT 1`, (rows) => rows[0] && toPoint(rows[0]))

  const history: AttestationsShape["history"] = (range) =>
    Effect.map(
      range === "all"
        ? sql<Row>`SELECT ${columns} FROM desk_attestations ORDER BY desk_attestations.seq`
        : sql<Row>`SELECT ${columns} FROM desk_attestations WHERE attested_at >= now() - make_interval(hours => ${historyRanges[range]}) ORDER BY desk_attestations.seq`,
      (rows) => rows.map(toPoint)
    )

  return Attestations.of({ publicKey: ed.public, append, byRequest, latest, history })
})

export const layer: Layer.Layer<Attestations, SqlError, SqlClient.SqlClient | SecretBox | DeskConfig> = Layer.effect(Attestations, make)
