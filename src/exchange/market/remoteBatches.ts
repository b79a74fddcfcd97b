// Orders for a market another node owns travel in one message per event-loop turn (issue 22,
// point 2), not one each: every call for that market made during one turn (the requests node:http
// parsed in one poll) joins a list, and at the turn's end (setImmediate) the list goes to the
// market's owner as one Batch. The owner queues the commands together, so they also share one
// commit, and answers each on its own. A failed message fails every call of its list the way a
// single message would (the caller answers "status unknown"); a retried place is safe by its
// client order id, as before.
import { Deferred, Effect, Exit } from "effect"
import type { BatchAnswer, BatchCommand } from "../../../schemas/exchange/market.ts"

/** Most commands one message carries; a fuller turn sends several. */
export const batchCommandsMax = 500

/** Messages and commands sent, per process (tests and the bench read it). */
export const remoteBatchCounts = { messages: 0, commands: 0 }

type Waiting<E> = { readonly command: BatchCommand; readonly done: Deferred.Deferred<BatchAnswer, E> }

const nextTurn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

export const makeRemoteBatches = <E>(send: (symbol: string, commands: ReadonlyArray<BatchCommand>) => Effect.Effect<ReadonlyArray<BatchAnswer>, E>) => {
  const open = new Map<string, Array<Waiting<E>>>()

  const flush = (symbol: string, list: Array<Waiting<E>>) =>
    Effect.gen(function*() {
      if (open.get(symbol) === list) open.delete(symbol)
      remoteBatchCounts.messages++
      remoteBatchCounts.commands += list.length
      const exit = yield* Effect.exit(send(symbol, list.map((w) => w.command)))
      for (const [i, w] of list.entries()) {
        if (Exit.isFailure(exit)) yield* Deferred.failCause(w.done, exit.cause)
        else {
          const answer = exit.value[i]
          yield* answer === undefined ? Deferred.die(w.done, new Error(`the market answered ${exit.value.length} of ${list.length} commands`)) : Deferred.succeed(w.done, answer)
        }
      }
    })

  return (symbol: string, command: BatchCommand): Effect.Effect<BatchAnswer, E> =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<BatchAnswer, E>()
      let list = open.get(symbol)
      if (list === undefined) {
        const fresh: Array<Waiting<E>> = []
        open.set(symbol, (list = fresh))
        // Not the caller's fiber: a caller that goes away does not take its neighbours' message with it.
        Effect.runFork(Effect.zipRight(nextTurn, flush(symbol, fresh)))
      }
      list.push({ command, done })
      if (list.length >= batchCommandsMax) open.delete(symbol)
      return yield* Deferred.await(done)
    })
}
