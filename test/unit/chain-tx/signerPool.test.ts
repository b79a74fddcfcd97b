// The signing pool (src/chain/signerPool.ts): a worker thread builds the same bytes as the event
// loop, a refusal comes back as its tag and message, a wallet's chained legs go to one worker,
// and a worker that dies mid-request fails that request (SignerUnavailable) and is replaced.
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { inline, make, type SignerPoolShape } from "../../../src/chain/signerPool.ts"
import { buildOmni, type OmniRequest, type Utxo } from "../../../src/chain/txBuilder.ts"
import { fund, params, unwrap, wallet } from "./fixtures.ts"

const alice = wallet(11)
const bob = wallet(12)

const send = (inputs: ReadonlyArray<Utxo>, amount: bigint, reference = bob.address): OmniRequest => ({
  inputs,
  signer: { privateKey: alice.privateKey },
  changeAddress: alice.address,
  payload: { type: "simpleSend", property: 3, amount },
  reference
})

/** The change output (vout 1) of a built leg, as the next leg's input. */
const changeOf = (hex: string, txid: string, value: bigint): Utxo => ({ txid, vout: 1, value, script: alice.script, prevTxHex: hex })

const withPool = <A>(options: { readonly workers: number; readonly exitAfter?: number }, f: (pool: SignerPoolShape) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(make(options), f)))

describe("signing pool", () => {
  it("a worker builds the same bytes as the loop, for a chain of legs each spending the last one's change", async () => {
    const { utxos } = fund(alice.script, [100_000n])
    await withPool({ workers: 2 }, (pool) =>
      Effect.gen(function*() {
        let coin = utxos[0]!
        for (let i = 1; i <= 5; i++) {
          const request = send([coin], BigInt(i))
          const here = unwrap(buildOmni(params, request))
          const there = yield* pool.buildOmni(params, request, alice.address)
          expect(Either.getOrThrow(there)).toEqual(here)
          const change = here.fee + 5_460n
          coin = changeOf(here.hex, here.txid, coin.value - change)
        }
        expect(pool.stats()).toMatchObject({ workers: 2, started: 2, died: 0, built: 5 })
      }))
  }, 30_000)

  it("a refusal comes back as the builder's tag and message, and inline answers the same", async () => {
    const { utxos } = fund(alice.script, [100_000n])
    const bad = send(utxos, 1n, "not-an-address")
    await withPool({ workers: 1 }, (pool) =>
      Effect.gen(function*() {
        const there = yield* pool.buildOmni(params, bad, alice.address)
        const here = yield* inline.buildOmni(params, bad, alice.address)
        expect(Either.isLeft(there)).toBe(true)
        expect(there).toEqual(here)
        expect(Either.getLeft(there).pipe((o) => o._tag === "Some" ? o.value._tag : "")).toBe("InvalidAddress")
      }))
  }, 30_000)

  it("a worker that dies mid-request fails it with SignerUnavailable; the next request gets a new worker", async () => {
    const { utxos } = fund(alice.script, [100_000n, 100_000n, 100_000n])
    await withPool({ workers: 1, exitAfter: 2 }, (pool) =>
      Effect.gen(function*() {
        const first = yield* pool.buildOmni(params, send([utxos[0]!], 1n), alice.address)
        expect(Either.isRight(first)).toBe(true)
        // The worker exits on its second request, unanswered.
        const lost = yield* Effect.flip(pool.buildOmni(params, send([utxos[1]!], 2n), alice.address))
        expect(lost._tag).toBe("SignerUnavailable")
        expect(lost.message).toMatch(/exited with code 1/)
        // Until its replacement has loaded, the worker's wallets are told to build elsewhere.
        expect((yield* Effect.flip(pool.buildOmni(params, send([utxos[1]!], 2n), alice.address))).message).toBe("signing worker restarting")
        yield* pool.allReady
        const again = yield* pool.buildOmni(params, send([utxos[1]!], 2n), alice.address)
        expect(Either.getOrThrow(again)).toEqual(unwrap(buildOmni(params, send([utxos[1]!], 2n))))
        expect(pool.stats()).toMatchObject({ started: 2, died: 1, built: 2, ready: 1 })
      }))
  }, 30_000)
})
