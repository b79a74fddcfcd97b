// A signing worker thread (signerPool.ts starts it): builds and signs Omni sends with the same
// builder the event loop would use (txBuilder.ts), so a leg's secp256k1 signatures (about 215 µs
// each here, tiny-secp256k1's WebAssembly) are not paid on the node's event loop (issue 22,
// point 3). Pure work: it reads no database and sends nothing, so a worker that dies mid-request
// leaves nothing behind; the pool answers its caller SignerUnavailable and the caller builds again.
import { parentPort, workerData } from "node:worker_threads"
import { Either } from "effect"
import { buildOmni, type OmniRequest } from "./txBuilder.ts"
import type { UtxoChainParams } from "./params.ts"
import type { SignerAnswer, SignerRequest } from "./signerProtocol.ts"

/** Tests only (signerPool's `exitAfter`): the worker exits, unanswered, on this request. */
const exitAfter = (workerData as { readonly exitAfter?: number } | undefined)?.exitAfter

/**
 * Each request carries the key as a fresh copy, and the builder remembers a key's derived public
 * key by the array's identity (txBuilder's keyCache): one array per key here, so a wallet's
 * public key is derived once per worker, not once per leg. Bounded: a node holds at most its
 * live grants' keys, and a full map is simply emptied.
 */
const keysMax = 4_096
const keys = new Map<string, Uint8Array>()
const keyOf = (privateKey: Uint8Array): Uint8Array => {
  const hex = Buffer.from(privateKey).toString("hex")
  const known = keys.get(hex)
  if (known !== undefined) return known
  if (keys.size >= keysMax) keys.clear()
  keys.set(hex, privateKey)
  return privateKey
}

/**
 * The same for the chain's params: the builder's key cache holds a key for one network object (by
 * identity), and every request brings a fresh copy. Without this each leg derived its public key
 * and its script again (measured: a worker spent about 1 ms a leg, against 0.3 ms on the loop).
 */
const paramsKnown = new Map<string, UtxoChainParams>()
const paramsOf = (params: UtxoChainParams): UtxoChainParams => {
  const key = JSON.stringify(params, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))
  const known = paramsKnown.get(key)
  if (known !== undefined) return known
  if (paramsKnown.size >= 64) paramsKnown.clear()
  paramsKnown.set(key, params)
  return params
}

let served = 0
const answer = (message: SignerAnswer) => parentPort!.postMessage(message)

parentPort!.on("message", (request: SignerRequest) => {
  served++
  if (exitAfter !== undefined && served >= exitAfter) process.exit(1)
  try {
    const params = paramsOf(request.params)
    const req: OmniRequest = { ...request.req, signer: { privateKey: keyOf(request.privateKey) } }
    const built = buildOmni(params, req)
    answer(Either.isRight(built)
      ? { id: request.id, built: built.right }
      : { id: request.id, refused: { _tag: built.left._tag, message: built.left.message } })
  } catch (e) {
    // A throw is a bug in the builder, not the caller's data: the pool reports it as a lost worker.
    answer({ id: request.id, crashed: e instanceof Error ? e.message : String(e) })
  }
})

// Loaded (tsx, the builder and its curve): the pool may send requests now.
parentPort!.postMessage("ready")
