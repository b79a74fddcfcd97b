// The key epoch ratchet, pure (src/exchange/authorization/keyEpochs.ts): v2 chains (spans of
// epochs) derive far epochs in a few thousand steps, agree with themselves whichever state they
// start from, and never give back an earlier epoch; v1 chains still open what they sealed; and the
// default settings destroy a key at most 2 minutes after its grant's expiry (issue 23.5).
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { advance, decodeState, encodeState, epochEndMs, epochOf, type EpochState, keyOf, newChain, openWithState, sealDelegatedKey, span } from "../../../src/exchange/authorization/keyEpochs.ts"
import { keyDestroyedWithinMs, periodMsDefault } from "../../../src/exchange/authorization/KeyEpochStore.ts"
import { defaults as exchangeDefaults } from "../../../src/exchange/ExchangeConfig.ts"

const master = Buffer.alloc(32, 7)
const at = (s: EpochState, epoch: number) => Either.getOrThrow(advance(s, epoch))

describe("key destruction window", () => {
  it("by default a grant's key is unrecoverable at most 2 minutes after its expiry", () => {
    expect(periodMsDefault).toBe(30_000)
    expect(keyDestroyedWithinMs(periodMsDefault, exchangeDefaults.sweepGraceMs)).toBeLessThanOrEqual(120_000)
    // Checked on the chain itself: for expiries all through an epoch, the sealing epoch (of
    // expiry + grace) ends within the window.
    const chain = newChain(periodMsDefault, 0)
    for (let expiry = 1_700_000_000_000; expiry < 1_700_000_000_000 + 2 * periodMsDefault; expiry += 997) {
      const end = epochEndMs(chain.periodMs, epochOf(chain.periodMs, expiry + exchangeDefaults.sweepGraceMs))
      expect(end).toBeGreaterThan(expiry + exchangeDefaults.sweepGraceMs)
      expect(end - expiry).toBeLessThanOrEqual(120_000)
    }
  })
})

describe("v2 chain", () => {
  const now = 1_700_000_000_000
  const chain = newChain(periodMsDefault, now)

  it("derives the same key of an epoch from any earlier state, across spans", () => {
    const targets = [chain.epoch, chain.epoch + 1, chain.epoch + span, chain.epoch + 3 * span + 17, chain.epoch + 1_100_000]
    const froms = [chain, at(chain, chain.epoch + 5), at(chain, chain.epoch + span - 1), at(chain, chain.epoch + 2 * span)]
    for (const target of targets) {
      const keys = froms.filter((f) => f.epoch <= target).map((f) => Either.getOrThrow(keyOf(f, target)).toString("hex"))
      expect(new Set(keys).size).toBe(1)
    }
    // A state advanced step by step is the state advanced at once.
    let walked = chain
    for (let e = chain.epoch + 1; e <= chain.epoch + 2 * span + 3; e++) walked = at(walked, e)
    expect(encodeState(walked)).toBe(encodeState(at(chain, chain.epoch + 2 * span + 3)))
  })

  it("reaches a year ahead of 30 s epochs (a v1 chain refuses it: over a million hashes)", () => {
    const yearAhead = chain.epoch + Math.ceil(366 * 86_400_000 / periodMsDefault)
    expect(Either.isRight(keyOf(chain, yearAhead))).toBe(true)
    expect(Either.isLeft(keyOf({ ...chain, next: undefined }, yearAhead))).toBe(true)
  })

  it("never gives back an earlier epoch, in or before its span: a sealed key does not open after its epoch", () => {
    const epoch = chain.epoch + span + 10
    const sealed = sealDelegatedKey(Either.getOrThrow(keyOf(chain, epoch)), epoch, master, "g1", "the wif")
    expect(Either.getOrThrow(openWithState(at(chain, epoch), master, "g1", sealed))).toBe("the wif")
    for (const later of [epoch + 1, epoch + span, epoch + 5 * span]) {
      const s = at(chain, later)
      expect(Either.isLeft(keyOf(s, epoch))).toBe(true)
      expect(Either.isLeft(openWithState(s, master, "g1", sealed))).toBe(true)
      // Nothing the state holds is an earlier key of the chain.
      const held = [s.key.toString("hex"), s.next!.toString("hex")]
      for (let e = chain.epoch; e < later; e += 97) expect(held).not.toContain(Either.getOrThrow(keyOf(chain, e)).toString("hex"))
    }
  })

  it("round-trips through its fixed-length file line", () => {
    const s = at(chain, chain.epoch + 3 * span)
    const text = encodeState(s)
    expect(text).toMatch(/^v2 /)
    expect(text.length).toBe(encodeState(at(chain, chain.epoch + 3 * span + 1)).length)
    expect(encodeState(Either.getOrThrow(decodeState(text)))).toBe(text)
    expect(Either.isLeft(decodeState(text.replace(/ [0-9a-f]{64}\n$/, "\n")))).toBe(true) // v2 without its span key
  })
})

describe("v1 chain (made before spans)", () => {
  it("still decodes, derives linearly and opens what it sealed", () => {
    const v1: EpochState = { chainId: "00000000-0000-4000-8000-000000000000", periodMs: 600_000, epoch: 100, key: Buffer.alloc(32, 1) }
    const text = encodeState(v1)
    expect(text).toMatch(/^v1 .* [0-9a-f]{64}\n$/)
    const decoded = Either.getOrThrow(decodeState(text))
    expect(decoded.next).toBeUndefined()
    const sealed = sealDelegatedKey(Either.getOrThrow(keyOf(decoded, 103)), 103, master, "g", "w")
    expect(Either.getOrThrow(openWithState(at(decoded, 102), master, "g", sealed))).toBe("w")
    expect(Either.isLeft(openWithState(at(decoded, 104), master, "g", sealed))).toBe(true)
    expect(Either.getOrThrow(keyOf(at(decoded, 101), 103))).toEqual(Either.getOrThrow(keyOf(decoded, 103)))
  })
})
