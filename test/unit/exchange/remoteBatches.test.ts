// Orders for a market another node owns: one message per event-loop turn (issue 22.2,
// src/exchange/market/remoteBatches.ts), with a stand-in for the cluster message.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { BatchAnswer, BatchCommand } from "../../../schemas/exchange/market.ts"
import { batchCommandsMax, makeRemoteBatches } from "../../../src/exchange/market/remoteBatches.ts"

const cancelAll = (userId: number): BatchCommand => ({ _tag: "CancelAll", cancelAll: { userId } as never })
const echo = (sent: Array<{ symbol: string; users: number[] }>) => (symbol: string, commands: ReadonlyArray<BatchCommand>) =>
  Effect.sync(() => {
    sent.push({ symbol, users: commands.map((c) => (c._tag === "CancelAll" ? c.cancelAll.userId : -1)) })
    return commands.map((c): BatchAnswer => c._tag === "CancelAll" && c.cancelAll.userId % 2 === 0
      ? { _tag: "CanceledAll", orders: [] }
      : { _tag: "Refused", code: -2011, msg: `user ${c._tag === "CancelAll" ? c.cancelAll.userId : "?"}` })
  })

describe("remote batches", () => {
  it("calls made in one turn travel as one message per market, each answered on its own and in order", async () => {
    const sent: Array<{ symbol: string; users: number[] }> = []
    const remote = makeRemoteBatches(echo(sent))
    const answers = await Effect.runPromise(Effect.all([
      remote("AAA", cancelAll(1)), remote("AAA", cancelAll(2)), remote("BBB", cancelAll(3)), remote("AAA", cancelAll(4))
    ], { concurrency: "unbounded" }))
    expect(sent).toEqual([{ symbol: "AAA", users: [1, 2, 4] }, { symbol: "BBB", users: [3] }])
    expect(answers.map((a) => a._tag)).toEqual(["Refused", "CanceledAll", "Refused", "CanceledAll"])
    expect(answers[2]).toMatchObject({ msg: "user 3" })
  })

  it("a later turn sends its own message", async () => {
    const sent: Array<{ symbol: string; users: number[] }> = []
    const remote = makeRemoteBatches(echo(sent))
    await Effect.runPromise(remote("AAA", cancelAll(2)))
    await Effect.runPromise(remote("AAA", cancelAll(4)))
    expect(sent.map((s) => s.users)).toEqual([[2], [4]])
  })

  it("a full list goes as it is and the turn's later calls start another", async () => {
    const sent: Array<{ symbol: string; users: number[] }> = []
    const remote = makeRemoteBatches(echo(sent))
    await Effect.runPromise(Effect.all(Array.from({ length: batchCommandsMax + 3 }, (_, i) => remote("AAA", cancelAll(2 * i))), { concurrency: "unbounded" }))
    expect(sent.map((s) => s.users.length)).toEqual([batchCommandsMax, 3])
  })

  it("a failed message fails every call it carried, as a single message would", async () => {
    const remote = makeRemoteBatches((_symbol, _commands) => Effect.fail("owner unreachable" as const))
    const errors = await Effect.runPromise(Effect.all([Effect.flip(remote("AAA", cancelAll(2))), Effect.flip(remote("AAA", cancelAll(4)))], { concurrency: "unbounded" }))
    expect(errors).toEqual(["owner unreachable", "owner unreachable"])
  })
})
