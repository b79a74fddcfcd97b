// Settlement legs built and signed off the event loop (issue 22, point 3): a pool of worker
// threads (signerWorker.ts) that run the same builder as the loop would. A leg's two expensive
// steps are its secp256k1 signatures (about 215 µs each here) and hashing; the loop keeps the coin
// choice, the store and the broadcast, and waits for the bytes.
//
// A wallet's legs chain on each other's change (a leg's input is the previous leg's output, whose
// txid its signature fixes), so one wallet's legs are built one after another, and always by the
// same worker (chosen by the wallet's address): that worker has already parsed the previous leg
// and derived the key. Wallets spread over the workers.
//
// A worker that dies (a crash, an exit, an out-of-memory) fails the requests it held with
// SignerUnavailable and is replaced in the background (after a growing wait if workers keep dying
// young); until its replacement has loaded, its wallets' requests fail at once and DelegatedWallet
// builds those legs on the event loop, so no leg ever waits for a worker to start. Nothing is lost with it: a worker only
// computes bytes, and a leg's bytes count only once its wallet has stored them (DelegatedWallet).
import { Worker } from "node:worker_threads"
import { Context, Data, Effect, Either, Layer, type Scope } from "effect"
import type { UtxoChainParams } from "./params.ts"
import type { SignerAnswer, SignerRequest, WireBuildError } from "./signerProtocol.ts"
import { buildOmni as buildOmniHere, type BuiltTx, type OmniRequest } from "./txBuilder.ts"

export type { WireBuildError } from "./signerProtocol.ts"

/** The worker died or could not start; the request was not answered. */
export class SignerUnavailable extends Data.TaggedError("SignerUnavailable")<{ readonly message: string }> {}

export interface SignerPoolStats {
  readonly workers: number
  /** Workers started, replacements included. */
  readonly started: number
  /** Workers that died (exited or failed) while the pool was open. */
  readonly died: number
  readonly built: number
  /** Workers loaded and taking requests now. */
  readonly ready: number
}

export interface SignerPoolShape {
  readonly workers: number
  /** buildOmni on a worker (the one for `route`, a wallet's address): the built transaction, or why the builder refused. */
  readonly buildOmni: (params: UtxoChainParams, req: OmniRequest, route: string) => Effect.Effect<Either.Either<BuiltTx, WireBuildError>, SignerUnavailable>
  readonly stats: () => SignerPoolStats
  /** Waits until every worker is loaded (a replacement after a death included). */
  readonly allReady: Effect.Effect<void>
}

export class SignerPool extends Context.Tag("shardline/SignerPool")<SignerPool, SignerPoolShape>() {}

/** SHARDLINE_SIGNING_WORKERS at most. */
export const signingWorkersMax = 16

export interface SignerPoolOptions {
  readonly workers: number
  /** Tests only: every worker exits, unanswered, on its n-th request (a death mid-batch). */
  readonly exitAfter?: number
}

const workerUrl = new URL("./signerWorker.ts", import.meta.url).href
// The node runs its TypeScript through tsx (`node --import tsx`); a worker started from a test
// runner has no such flag, so the worker registers tsx itself before it loads its module.
const boot = `const u = ${JSON.stringify(workerUrl)};
(u.endsWith(".ts") ? import("tsx/esm/api").then((m) => m.register()) : Promise.resolve()).then(() => import(u))`

interface Slot {
  worker: Worker | undefined
  /** The worker has loaded its modules (its first message); before that requests go elsewhere. */
  ready: boolean
  startedAt: number
  /** Wait before the next start after a death, ms (doubles while workers die young). */
  backoffMs: number
  readonly pending: Map<number, (answer: SignerAnswer | SignerUnavailable) => void>
}

/** The route's worker: a wallet always goes to the same one (FNV-1a of its address). */
const slotIndex = (route: string, n: number): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < route.length; i++) h = Math.imul(h ^ route.charCodeAt(i), 0x01000193)
  return (h >>> 0) % n
}

/** A worker that dies sooner than this after its start is crash-looping: its replacement waits, longer each time. */
const youngMs = 10_000
const backoffMinMs = 200
const backoffMaxMs = 30_000

/** The pool, open for the scope: its workers are stopped when the scope closes. */
export const make = (options: SignerPoolOptions): Effect.Effect<SignerPoolShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const slots: Slot[] = Array.from({ length: options.workers }, () => ({ worker: undefined, ready: false, startedAt: 0, backoffMs: 0, pending: new Map() }))
    let nextId = 0
    let closed = false
    const counts = { started: 0, died: 0, built: 0 }
    const readyWaiters = new Set<() => void>()

    const lose = (slot: Slot, worker: Worker, why: string) => {
      if (slot.worker !== worker) return
      slot.worker = undefined
      slot.ready = false
      const waiting = [...slot.pending.values()]
      slot.pending.clear()
      for (const resume of waiting) resume(new SignerUnavailable({ message: `signing worker lost: ${why}` }))
      if (closed) return
      counts.died++
      // Replaced in the background; meanwhile its wallets' legs are built on the event loop.
      slot.backoffMs = Date.now() - slot.startedAt < youngMs ? Math.min(backoffMaxMs, Math.max(backoffMinMs, slot.backoffMs * 2)) : 0
      setTimeout(() => { if (!closed && slot.worker === undefined) start(slot) }, slot.backoffMs).unref()
    }

    const start = (slot: Slot): void => {
      const worker = new Worker(boot, { eval: true, workerData: options.exitAfter === undefined ? {} : { exitAfter: options.exitAfter } })
      counts.started++
      slot.startedAt = Date.now()
      // The pool's scope stops the workers; an idle worker must not keep the process up.
      worker.unref()
      worker.on("message", (answer: SignerAnswer | "ready") => {
        if (answer === "ready") {
          slot.ready = slot.worker === worker
          for (const wake of readyWaiters) wake()
          return
        }
        const resume = slot.pending.get(answer.id)
        if (resume === undefined) return
        slot.pending.delete(answer.id)
        resume(answer)
      })
      worker.on("error", (e) => lose(slot, worker, e.message))
      worker.on("exit", (code) => lose(slot, worker, `exited with code ${code}`))
      slot.worker = worker
    }

    /** Until every slot's worker is ready (the pool's open; a test's wait for a replacement). */
    const allReady = Effect.async<void>((resume) => {
      const check = () => {
        if (closed || slots.every((s) => s.ready)) {
          readyWaiters.delete(check)
          resume(Effect.void)
        }
      }
      readyWaiters.add(check)
      check()
      return Effect.sync(() => { readyWaiters.delete(check) })
    })

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        closed = true
        return Promise.all(slots.map((s) => {
          const w = s.worker
          s.worker = undefined
          s.ready = false
          return w === undefined ? undefined : w.terminate()
        }))
      }))

    // Started and loaded before the pool is handed out (about a second: tsx and the builder's
    // modules), so no leg waits for a worker to start.
    for (const slot of slots) start(slot)
    yield* allReady

    const buildOmni = (params: UtxoChainParams, req: OmniRequest, route: string) =>
      Effect.async<Either.Either<BuiltTx, WireBuildError>, SignerUnavailable>((resume) => {
        if (closed) return resume(Effect.fail(new SignerUnavailable({ message: "the signing pool is closed" })))
        if (!("privateKey" in req.signer)) return resume(Effect.die(new Error("signerPool: the key travels as bytes (privateKey), not as a WIF")))
        const slot = slots[slotIndex(route, slots.length)]!
        const id = nextId++
        slot.pending.set(id, (answer) => {
          if (answer instanceof SignerUnavailable) return resume(Effect.fail(answer))
          if ("built" in answer) {
            counts.built++
            return resume(Effect.succeed(Either.right(answer.built)))
          }
          if ("refused" in answer) return resume(Effect.succeed(Either.left(answer.refused)))
          return resume(Effect.fail(new SignerUnavailable({ message: `signing worker failed: ${answer.crashed}` })))
        })
        const { signer, ...rest } = req
        const message: SignerRequest = { id, params, req: rest, privateKey: signer.privateKey }
        // No live, loaded worker (it died and its replacement is starting): the caller builds here.
        if (slot.worker === undefined || !slot.ready) {
          slot.pending.delete(id)
          return resume(Effect.fail(new SignerUnavailable({ message: "signing worker restarting" })))
        }
        try {
          slot.worker.postMessage(message)
        } catch (e) {
          slot.pending.delete(id)
          return resume(Effect.fail(new SignerUnavailable({ message: `signing worker unreachable: ${e instanceof Error ? e.message : String(e)}` })))
        }
        // Interrupted (the caller's timeout): the answer, if it comes, is dropped.
        return Effect.sync(() => { slot.pending.delete(id) })
      })

    return {
      workers: options.workers,
      buildOmni,
      stats: () => ({ workers: options.workers, ready: slots.filter((s) => s.ready).length, ...counts }),
      allReady
    } satisfies SignerPoolShape
  })

/** No workers: the builder runs on the caller's thread (SHARDLINE_SIGNING_WORKERS=0, and a wallet outside a node). */
export const inline: SignerPoolShape = {
  workers: 0,
  buildOmni: (params, req) =>
    Effect.sync(() => Either.mapLeft(buildOmniHere(params, req), (e): WireBuildError => ({ _tag: e._tag, message: e.message }))),
  stats: () => ({ workers: 0, started: 0, died: 0, built: 0, ready: 0 }),
  allReady: Effect.void
}

/** The node's pool: `workers` threads, or none (inline) at 0. */
export const layer = (options: SignerPoolOptions): Layer.Layer<SignerPool> =>
  options.workers === 0 ? Layer.succeed(SignerPool, inline) : Layer.scoped(SignerPool, make(options))
