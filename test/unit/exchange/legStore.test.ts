// Which waiting stores go in the next statement (legStore.ts): in arrival order, every request
// whose legs are not already in it; a request that repeats one waits for the next round whole.
import { describe, expect, it } from "vitest"
import { legKey, nextRound } from "../../../src/exchange/authorization/legStore.ts"

const req = (name: string, ...legs: Array<[string, string]>) => ({ name, legs: legs.map(([tradeId, leg]) => ({ tradeId, leg })) })

describe("leg store rounds", () => {
  it("takes every request whose legs are new to the round, in order", () => {
    const a = req("a", ["1", "base"], ["2", "base"])
    const b = req("b", ["1", "quote"])
    const c = req("c", ["2", "base"], ["3", "base"])
    const d = req("d", ["3", "base"])
    const { now, later } = nextRound([a, b, c, d])
    expect(now.map((r) => r.name)).toEqual(["a", "b", "d"])
    expect(later.map((r) => r.name)).toEqual(["c"])
    // The carried request goes first next time.
    expect(nextRound([...later, req("e", ["2", "base"])]).now.map((r) => r.name)).toEqual(["c"])
  })

  it("always takes the first request, and keys a trade id however it is written", () => {
    expect(nextRound([req("x", ["7", "base"])]).now).toHaveLength(1)
    expect(legKey("007", "base")).toBe(legKey("7", "base"))
    expect(nextRound([req("a", ["7", "base"]), req("b", ["007", "base"])]).later.map((r) => r.name)).toEqual(["b"])
  })
})
