// This node's copy of the key epoch ratchet (keyEpochs.ts): a file outside Postgres,
// <dataDir>/key-epochs, rewritten in place and fsynced each time an epoch ends, so the node
// forgets the ended epoch's key. Every node of a cluster holds the same chain: the first node
// makes it, a node without it asks a running node through Postgres (sealed to a one-time key),
// and a node whose file belongs to another chain, or that nobody answers while the database has
// a chain, refuses to start: there is never a second chain.
import { SqlClient } from "@effect/sql"
import { randomUUID, timingSafeEqual } from "node:crypto"
import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Config, type ConfigError, Context, Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import { AppConfig } from "../../platform/Config.ts"
import { invalidSetting } from "../../platform/settings.ts"
import { NodeIdentity } from "../../platform/NodeIdentity.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import * as K from "./keyEpochs.ts"

export const stateFileName = "key-epochs"
/**
 * Length of an epoch for a new chain (ms); a chain keeps the period it was made with. A grant's
 * key is destroyed when the epoch of its expiry + the sweep grace ends: at most
 * `keyDestroyedWithinMs` after expiry, 90 s with the defaults (issue 23.5: at most 2 minutes).
 */
export const periodMsDefault = 30_000

/** The longest a delegated key stays recoverable after its grant's expiry: the grace, then at most one epoch. */
export const keyDestroyedWithinMs = (periodMs: number, sweepGraceMs: number): number => sweepGraceMs + periodMs
/** How long a node without the ratchet waits for a running node to hand it over (ms). */
export const transferWaitMs = 10_000
/** How often every node looks for a node asking for the ratchet (ms). */
export const answerPollMs = 1_000
/** Derived epoch keys kept in memory, future epochs only. */
export const cachedKeysMax = 1_024

export interface KeyEpochsShape {
  /** Seals under the key of the epoch `expiresAtMs` falls in; fails if that epoch is already destroyed. */
  readonly seal: (grantId: string, expiresAtMs: number, wif: string) => Effect.Effect<string, K.EpochKeyError>
  readonly open: (grantId: string, sealed: string) => Effect.Effect<string, K.EpochKeyError>
  /** When the key sealed in `sealed` is destroyed: the end of its epoch (the ratchet runs just after). */
  readonly horizonMs: (sealed: string) => Either.Either<number, K.EpochKeyError>
}

export class KeyEpochs extends Context.Tag("shardline/KeyEpochs")<KeyEpochs, KeyEpochsShape>() {}

const periodMs = Config.integer("SHARDLINE_KEY_EPOCH_MS").pipe(
  Config.validate({
    message: `must be an integer from ${K.periodMsMin} to ${K.periodMsMax} milliseconds`,
    validation: (ms) => ms >= K.periodMsMin && ms <= K.periodMsMax
  }),
  Config.withDefault(periodMsDefault)
)

/** Overwrites the previous state's bytes in place (the format has a fixed length) and fsyncs. */
const writeState = (file: string, state: K.EpochState) => {
  const text = K.encodeState(state)
  const fd = openSync(file, existsSync(file) ? "r+" : "wx", 0o600)
  try {
    writeSync(fd, text, 0)
    ftruncateSync(fd, Buffer.byteLength(text))
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

const sameProof = (a: string, b: string) => {
  const x = Buffer.from(a, "base64")
  const y = Buffer.from(b, "base64")
  return x.length === y.length && timingSafeEqual(x, y)
}

export const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  const node = yield* NodeIdentity
  const period = yield* periodMs
  const file = join(config.dataDir, stateFileName)
  const masterSubkey = box.subkey(K.delegatedKeysLabel)
  const transferSubkey = box.subkey("key epoch transfer")
  const refuse = (message: string) => Effect.fail(invalidSetting("DATA_DIR", message))

  const chainRow = sql<{ chain_id: string }>`SELECT chain_id FROM key_epoch_chain WHERE id = 1`.pipe(
    Effect.map((rows) => Option.fromNullable(rows[0]?.chain_id)),
    Effect.orDie
  )
  const keep = (s: K.EpochState) =>
    Effect.sync(() => {
      mkdirSync(config.dataDir, { recursive: true })
      writeState(file, s)
      return s
    })

  /** Asks the running nodes for the ratchet; none if nobody answered in time. */
  const fetchFromPeer = (chainId: string) =>
    Effect.gen(function*() {
      const id = randomUUID()
      const request = K.transferRequest()
      yield* sql`INSERT INTO key_epoch_transfers (id, requester, public_key, proof)
        VALUES (${id}, ${node.name}, ${request.publicKey}, ${K.transferProof(transferSubkey, id, request.publicKey)})`
      const answer = yield* sql<{ responder_key: string; sealed: string }>`SELECT responder_key, sealed
        FROM key_epoch_transfers WHERE id = ${id} AND sealed IS NOT NULL`.pipe(
        Effect.flatMap((rows) => Option.match(Option.fromNullable(rows[0]), { onNone: () => Effect.fail("pending" as const), onSome: Effect.succeed })),
        Effect.retry(Schedule.spaced(Duration.millis(250)).pipe(Schedule.upTo(Duration.millis(transferWaitMs)))),
        Effect.option
      )
      yield* sql`DELETE FROM key_epoch_transfers WHERE id = ${id}`
      if (Option.isNone(answer)) return Option.none<K.EpochState>()
      const state = K.openTransfer(request, id, answer.value.responder_key, answer.value.sealed)
      if (Either.isLeft(state) || state.right.chainId !== chainId) return Option.none<K.EpochState>()
      return Option.some(state.right)
    }).pipe(Effect.orDie)

  const establish: Effect.Effect<K.EpochState, ConfigError.ConfigError> = Effect.gen(function*() {
    const chain = yield* chainRow
    if (existsSync(file)) {
      const decoded = K.decodeState(readFileSync(file, "utf8"))
      if (Either.isLeft(decoded)) return yield* refuse(`${file}: ${decoded.left.message}`)
      const own = decoded.right
      if (Option.isNone(chain)) {
        yield* sql`INSERT INTO key_epoch_chain (id, chain_id, period_ms) VALUES (1, ${own.chainId}, ${own.periodMs})
          ON CONFLICT (id) DO NOTHING`.pipe(Effect.orDie)
      }
      const now = yield* chainRow
      if (Option.isSome(now) && now.value !== own.chainId) {
        return yield* refuse(`${file} holds key epoch chain ${own.chainId} but this database's delegated keys use chain ${now.value} (table key_epoch_chain); move the file away to fetch the database's chain from a running node`)
      }
      return own
    }
    if (Option.isNone(chain)) {
      const fresh = K.newChain(period, Date.now())
      const won = yield* sql`INSERT INTO key_epoch_chain (id, chain_id, period_ms) VALUES (1, ${fresh.chainId}, ${fresh.periodMs})
        ON CONFLICT (id) DO NOTHING RETURNING chain_id`.pipe(Effect.orDie)
      if (won.length > 0) return yield* keep(fresh)
    }
    const chainId = Option.getOrElse(yield* chainRow, () => "")
    const fetched = yield* fetchFromPeer(chainId)
    if (Option.isSome(fetched)) return yield* keep(fetched.value)
    // Nobody answered, but the database has a chain: never start a second one. The sealed keys
    // need the first, and a node that holds it but was slow to answer would go on sealing under
    // it, so each node's grants would open only on the nodes of its own chain.
    const [{ n }] = (yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM authorization_keys`.pipe(Effect.orDie)) as [{ n: string }]
    return yield* refuse(`no running node handed over key epoch chain ${chainId} (table key_epoch_chain) within ${transferWaitMs / 1000} s, and a second chain would leave the ${n} sealed delegated keys (table authorization_keys) unreadable: start a node that has its ${stateFileName} file (or copy that file into this data dir) and start this one again; only if no node has it any more, deleting the key_epoch_chain row gives those keys up`)
  })

  let state = yield* establish
  const cache = new Map<number, Buffer>()

  /** Moves to the clock's epoch: the ended epochs' keys leave memory and the file. */
  const ratchet = () => {
    const next = K.advance(state, K.epochOf(state.periodMs, Date.now()))
    if (Either.isLeft(next) || next.right.epoch === state.epoch) return
    state = next.right
    for (const epoch of cache.keys()) if (epoch < state.epoch) cache.delete(epoch)
    writeState(file, state)
  }
  const keyOf = (epoch: number) => {
    ratchet()
    const hit = cache.get(epoch)
    if (hit !== undefined) return Either.right(hit)
    return Either.map(K.keyOf(state, epoch), (key) => {
      if (cache.size < cachedKeysMax) cache.set(epoch, key)
      return key
    })
  }
  yield* Effect.sync(ratchet)

  // What `authorizations show` reads as keyDestroyedAt: the epoch this node's ratchet has reached,
  // written after the file (so never before the key is gone here). Postgres away: the next
  // boundary writes it again.
  const record = Effect.suspend(() =>
    sql`UPDATE key_epoch_chain SET ratcheted_epoch = GREATEST(COALESCE(ratcheted_epoch, 0), ${state.epoch})
      WHERE id = 1 AND chain_id = ${state.chainId}`
  ).pipe(Effect.asVoid, Effect.catchAllCause(() => Effect.void))
  yield* record

  // Each epoch boundary: ratchet. A failed write is retried at the next boundary (memory has moved on).
  yield* Effect.suspend(() => Effect.sleep(Duration.millis((state.epoch + 1) * state.periodMs - Date.now() + 5))).pipe(
    Effect.zipRight(Effect.sync(ratchet)),
    Effect.zipRight(record), // only once the file is rewritten
    Effect.catchAllDefect((d) => Effect.logError("key epoch ratchet: could not rewrite the state file", d)),
    Effect.forever,
    Effect.forkScoped
  )

  // Answer nodes asking for the ratchet (their request is signed with the master key's subkey).
  const answer = Effect.gen(function*() {
    yield* sql`DELETE FROM key_epoch_transfers WHERE created_at < now() - interval '5 minutes'`
    const pending = yield* sql<{ id: string; public_key: string; proof: string }>`SELECT id, public_key, proof
      FROM key_epoch_transfers WHERE sealed IS NULL AND created_at > now() - interval '1 minute' LIMIT 16`
    for (const r of pending) {
      if (!sameProof(r.proof, K.transferProof(transferSubkey, r.id, r.public_key))) continue
      ratchet()
      const sealed = K.sealTransfer(state, r.id, r.public_key)
      if (Either.isLeft(sealed)) continue
      yield* sql`UPDATE key_epoch_transfers SET responder_key = ${sealed.right.responderKey}, sealed = ${sealed.right.sealed}
        WHERE id = ${r.id} AND sealed IS NULL`
    }
  })
  yield* answer.pipe(
    Effect.catchAllCause(() => Effect.void), // Postgres away: the asking node waits or refuses, and says so
    Effect.repeat(Schedule.spaced(Duration.millis(answerPollMs))),
    Effect.forkScoped
  )

  return KeyEpochs.of({
    seal: (grantId, expiresAtMs, wif) =>
      Effect.suspend(() => {
        const epoch = K.epochOf(state.periodMs, expiresAtMs)
        return Either.map(keyOf(epoch), (key) => K.sealDelegatedKey(key, epoch, masterSubkey, grantId, wif))
      }),
    open: (grantId, sealed) =>
      Effect.suspend(() => Either.flatMap(Either.flatMap(K.sealedEpoch(sealed), keyOf), (key) => K.openDelegatedKey(key, masterSubkey, grantId, sealed))),
    horizonMs: (sealed) => Either.map(K.sealedEpoch(sealed), (epoch) => K.epochEndMs(state.periodMs, epoch))
  })
})

export const layer = Layer.scoped(KeyEpochs, make)
