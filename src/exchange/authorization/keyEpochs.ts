// Crypto-shredding of delegated keys by expiry period. Pure: no I/O, no clock.
//
// Time is cut into epochs of `periodMs`. Each epoch has a key; whoever holds epoch e's key can
// derive every later key and no earlier one. A delegated key is sealed under a key derived from
// the key of the epoch its grant expires in (and from the master key, and bound to the grant id).
// When the epoch ends every node ratchets past it and overwrites its copy: from then on no copy
// of the sealed bytes (heap, WAL, backup), not even with the master key, can be opened. See
// docs/runtime.md, "Key destruction".
//
// Two shapes of chain. v1 (chains made before issue 23.5): epoch e+1's key is a hash of epoch
// e's, so a key 366 days ahead is that many epochs of hashing away. v2 (every new chain): epochs
// are grouped `span` at a time into spans; each span has a key, the next span's is a hash of it,
// a span's first epoch key is a hash of the span key under another label, and the epoch keys of
// a span follow each other as in v1. A node holds its epoch's key and the NEXT span's key (never
// its own span's, which would give back the earlier epochs of the span): a key a year ahead is
// then at most a few thousand hashes away even with 30 s epochs, which is what lets epochs, and
// so the time a dead key stays recoverable, be short.
import { createCipheriv, createDecipheriv, createHmac, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, randomUUID, type KeyObject } from "node:crypto"
import { Data, Either } from "effect"

/** A period, an epoch cut out of time, or a key that cannot be derived; `message` is for a person. */
export class EpochKeyError extends Data.TaggedError("EpochKeyError")<{ readonly message: string }> {}

/** One node's ratchet: the key of `epoch` of chain `chainId`. Earlier keys are gone. */
export interface EpochState {
  readonly chainId: string
  readonly periodMs: number
  readonly epoch: number
  readonly key: Buffer
  /** v2 chains: the key of the span after `epoch`'s (see the top of this file); v1: none. */
  readonly next?: Buffer | undefined
}

export const periodMsMin = 1_000
export const periodMsMax = 86_400_000
/** Epochs per span of a v2 chain (30 s epochs: spans of 8.5 hours, 1,028 spans a year). */
export const span = 1_024
/** Most hashing steps one derivation may take (v1 with 10 min epochs: 190 years; v2: far more). */
export const stepsMax = 1_000_000

type Result<A> = Either.Either<A, EpochKeyError>
const fail = (message: string): Result<never> => Either.left(new EpochKeyError({ message }))

export const epochOf = (periodMs: number, atMs: number): number => Math.floor(atMs / periodMs)

/** When `epoch` ends: from then on its key is destroyed on every node whose clock has passed it. */
export const epochEndMs = (periodMs: number, epoch: number): number => (epoch + 1) * periodMs

const hash = (key: Buffer, label: string): Buffer => createHmac("sha256", key).update(label).digest()
const step = (key: Buffer): Buffer => hash(key, "shardline key epoch ratchet v1")
const spanStep = (key: Buffer): Buffer => hash(key, "shardline key epoch span ratchet v2")
const firstOfSpan = (spanKey: Buffer): Buffer => hash(spanKey, "shardline key epoch first of span v2")

/** A new chain: v2, random keys for this epoch and for the next span. */
export const newChain = (periodMs: number, nowMs: number): EpochState =>
  ({ chainId: randomUUID(), periodMs, epoch: epochOf(periodMs, nowMs), key: randomBytes(32), next: randomBytes(32) })

const stepsFrom = (key: Buffer, steps: number): Buffer => {
  let k = key
  for (let i = 0; i < steps; i++) k = step(k)
  return k
}

/** `epoch`'s key and the key of the span after it, derived forward from `from` (v2). */
const deriveV2 = (from: EpochState, next: Buffer, epoch: number): Result<{ key: Buffer; next: Buffer }> => {
  const here = Math.floor(from.epoch / span)
  const there = Math.floor(epoch / span)
  if (there === here) return Either.right({ key: stepsFrom(from.key, epoch - from.epoch), next })
  const steps = there - here - 1 + (epoch - there * span)
  if (steps > stepsMax) return fail(`epoch ${epoch} is more than ${stepsMax} derivation steps ahead`)
  let spanKey = next
  for (let c = here + 1; c < there; c++) spanKey = spanStep(spanKey)
  return Either.right({ key: stepsFrom(firstOfSpan(spanKey), epoch - there * span), next: spanStep(spanKey) })
}

const derive = (from: EpochState, epoch: number): Result<EpochState> => {
  if (epoch < from.epoch) return fail(`the key of epoch ${epoch} is destroyed (this node is at epoch ${from.epoch})`)
  if (from.next !== undefined) return Either.map(deriveV2(from, from.next, epoch), (d) => ({ ...from, epoch, key: d.key, next: d.next }))
  if (epoch - from.epoch > stepsMax) return fail(`epoch ${epoch} is more than ${stepsMax} epochs ahead`)
  return Either.right({ ...from, epoch, key: stepsFrom(from.key, epoch - from.epoch) })
}

/** The key of `epoch`, derived forward from `from` (a later state cannot give it back). */
export const keyOf = (from: EpochState, epoch: number): Result<Buffer> => Either.map(derive(from, epoch), (s) => s.key)

/** The state moved forward to `epoch` (never backward: that would need a destroyed key). */
export const advance = (state: EpochState, epoch: number): Result<EpochState> =>
  epoch <= state.epoch ? Either.right(state) : derive(state, epoch)

// Fixed length per version, so a rewrite in place covers every byte of the previous state (a
// chain never changes version).
const fileRe = /^(v1|v2) ([0-9a-f-]{36}) (\d{10}) (\d{16}) ([0-9a-f]{64})(?: ([0-9a-f]{64}))?\n$/

export const encodeState = (s: EpochState): string =>
  `${s.next === undefined ? "v1" : "v2"} ${s.chainId} ${String(s.periodMs).padStart(10, "0")} ${String(s.epoch).padStart(16, "0")} ${s.key.toString("hex")}` +
  `${s.next === undefined ? "" : ` ${s.next.toString("hex")}`}\n`

export const decodeState = (text: string): Result<EpochState> => {
  const m = fileRe.exec(text)
  if (m === null || (m[1] === "v2") !== (m[6] !== undefined)) {
    return fail("not a key epoch state (expected `v2 <chain> <period ms> <epoch> <key hex> <next span key hex>`, or v1 without the last)")
  }
  const state = { chainId: m[2]!, periodMs: Number(m[3]), epoch: Number(m[4]), key: Buffer.from(m[5]!, "hex") }
  return Either.right(m[6] === undefined ? state : { ...state, next: Buffer.from(m[6], "hex") })
}

const gcmSeal = (key: Buffer, plain: Buffer): string => {
  const nonce = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, nonce)
  const body = Buffer.concat([cipher.update(plain), cipher.final()])
  return [nonce, cipher.getAuthTag(), body].map((b) => b.toString("base64")).join(":")
}

const gcmOpen = (key: Buffer, sealed: string): Result<Buffer> => {
  const [nonce, tag, body] = sealed.split(":")
  if (nonce === undefined || tag === undefined || body === undefined) return fail("malformed sealed value")
  return Either.try({
    try: () => {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"))
      decipher.setAuthTag(Buffer.from(tag, "base64"))
      return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()])
    },
    catch: () => new EpochKeyError({ message: "the sealed value does not open with this key" })
  })
}

/** The label of the master key's subkey that goes into every delegated key's data key. */
export const delegatedKeysLabel = "delegated keys"

/** The grant's own key: the epoch key, the master key's subkey and the grant id all go in. */
const dataKey = (epochKey: Buffer, masterSubkey: Buffer, grantId: string): Buffer =>
  Buffer.from(hkdfSync("sha256", epochKey, masterSubkey, `shardline delegated key v1 ${grantId}`, 32))

/** `e1:<epoch>:<nonce>:<tag>:<ciphertext>`; `epochKey` is the key of `epoch`, the epoch the grant expires in. */
export const sealDelegatedKey = (epochKey: Buffer, epoch: number, masterSubkey: Buffer, grantId: string, wif: string): string =>
  `e1:${epoch}:${gcmSeal(dataKey(epochKey, masterSubkey, grantId), Buffer.from(wif, "utf8"))}`

/** The epoch whose key a sealed delegated key needs. */
export const sealedEpoch = (sealed: string): Result<number> => {
  const m = /^e1:(\d+):/.exec(sealed)
  return m === null ? fail("not a sealed delegated key") : Either.right(Number(m[1]))
}

export const openDelegatedKey = (epochKey: Buffer, masterSubkey: Buffer, grantId: string, sealed: string): Result<string> =>
  Either.map(gcmOpen(dataKey(epochKey, masterSubkey, grantId), sealed.replace(/^e1:\d+:/, "")), (b) => b.toString("utf8"))

/** Opens with whatever `state` can still derive: after its epoch has passed, nothing opens. */
export const openWithState = (state: EpochState, masterSubkey: Buffer, grantId: string, sealed: string): Result<string> =>
  Either.flatMap(Either.flatMap(sealedEpoch(sealed), (epoch) => keyOf(state, epoch)),
    (key) => openDelegatedKey(key, masterSubkey, grantId, sealed))

// Handing the ratchet to a node that has none, through Postgres, without Postgres ever holding
// it in a form that outlives the two processes: sealed to an X25519 key that only the asking
// process holds, in memory. The request carries an HMAC under the master key, so only a holder
// of the master key can ask.

export interface TransferRequest {
  readonly privateKey: KeyObject
  /** SPKI DER, base64. */
  readonly publicKey: string
}

export const transferRequest = (): TransferRequest => {
  const { privateKey, publicKey } = generateKeyPairSync("x25519")
  return { privateKey, publicKey: publicKey.export({ format: "der", type: "spki" }).toString("base64") }
}

export const transferProof = (masterSubkey: Buffer, id: string, publicKey: string): string =>
  createHmac("sha256", masterSubkey).update(`${id}:${publicKey}`).digest("base64")

const transferKey = (privateKey: KeyObject, peerPublicKey: string, id: string): Buffer =>
  Buffer.from(hkdfSync("sha256",
    diffieHellman({ privateKey, publicKey: createPublicKey({ key: Buffer.from(peerPublicKey, "base64"), format: "der", type: "spki" }) }),
    id, "shardline key epoch transfer v1", 32))

/** The responder's answer: its one-time public key and the state sealed to the asker. */
export const sealTransfer = (state: EpochState, id: string, requesterPublicKey: string): Result<{ responderKey: string; sealed: string }> =>
  Either.try({
    try: () => {
      const own = transferRequest()
      return { responderKey: own.publicKey, sealed: gcmSeal(transferKey(own.privateKey, requesterPublicKey, id), Buffer.from(encodeState(state))) }
    },
    catch: () => new EpochKeyError({ message: "the transfer request carries no usable X25519 public key" })
  })

export const openTransfer = (request: TransferRequest, id: string, responderKey: string, sealed: string): Result<EpochState> =>
  Either.flatMap(
    Either.flatMap(
      Either.try({ try: () => transferKey(request.privateKey, responderKey, id), catch: () => new EpochKeyError({ message: "the responder's public key is not X25519" }) }),
      (key) => gcmOpen(key, sealed)
    ),
    (plain) => decodeState(plain.toString("utf8"))
  )

