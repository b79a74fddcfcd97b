// Crypto-shredding of delegated keys by expiry period. Pure: no I/O, no clock.
//
// Time is cut into epochs of `periodMs`. Each epoch has a key; the next one is a one-way hash of
// it (a ratchet), so whoever holds epoch e's key can derive every later key and no earlier one.
// A delegated key is sealed under a key derived from the key of the epoch its grant expires in
// (and from the master key, and bound to the grant id). When the epoch ends every node ratchets
// past it and overwrites its copy: from then on no copy of the sealed bytes (heap, WAL, backup),
// not even with the master key, can be opened. See docs/runtime.md, "Key destruction".
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
}

export const periodMsMin = 1_000
export const periodMsMax = 86_400_000
/** Most ratchet steps one derivation may take (10 min epochs: 190 years; 1 s epochs: 11 days). */
export const stepsMax = 1_000_000

type Result<A> = Either.Either<A, EpochKeyError>
const fail = (message: string): Result<never> => Either.left(new EpochKeyError({ message }))

export const epochOf = (periodMs: number, atMs: number): number => Math.floor(atMs / periodMs)

const step = (key: Buffer): Buffer => createHmac("sha256", key).update("shardline key epoch ratchet v1").digest()

export const newChain = (periodMs: number, nowMs: number): EpochState =>
  ({ chainId: randomUUID(), periodMs, epoch: epochOf(periodMs, nowMs), key: randomBytes(32) })

/** The key of `epoch`, derived forward from `from` (a later epoch's key cannot give it back). */
export const keyOf = (from: EpochState, epoch: number): Result<Buffer> => {
  if (epoch < from.epoch) return fail(`the key of epoch ${epoch} is destroyed (this node is at epoch ${from.epoch})`)
  if (epoch - from.epoch > stepsMax) return fail(`epoch ${epoch} is more than ${stepsMax} epochs ahead`)
  let key = from.key
  for (let e = from.epoch; e < epoch; e++) key = step(key)
  return Either.right(key)
}

/** The state moved forward to `epoch` (never backward: that would need a destroyed key). */
export const advance = (state: EpochState, epoch: number): Result<EpochState> =>
  epoch <= state.epoch ? Either.right(state) : Either.map(keyOf(state, epoch), (key) => ({ ...state, epoch, key }))

// Fixed length, so a rewrite in place covers every byte of the previous state.
const fileRe = /^v1 ([0-9a-f-]{36}) (\d{10}) (\d{16}) ([0-9a-f]{64})\n$/

export const encodeState = (s: EpochState): string =>
  `v1 ${s.chainId} ${String(s.periodMs).padStart(10, "0")} ${String(s.epoch).padStart(16, "0")} ${s.key.toString("hex")}\n`

export const decodeState = (text: string): Result<EpochState> => {
  const m = fileRe.exec(text)
  if (m === null) return fail("not a key epoch state (expected `v1 <chain> <period ms> <epoch> <key hex>`)")
  return Either.right({ chainId: m[1]!, periodMs: Number(m[2]), epoch: Number(m[3]), key: Buffer.from(m[4]!, "hex") })
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

