// Before a grant's key goes (expiry or replacement), every market trading its asset expires the
// grant's open orders (Market ExpireGrant, volatile), so no fill can record a leg the key is no
// longer there to sign. A market that does not answer is asked again with backoff, within a
// budget: the key must still open for the sweep that follows (docs/exchange.md, "Settlement").
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Schedule } from "effect"
import { ExpireGrant, Market } from "../../../schemas/exchange/market.ts"

const describe = (e: { readonly _tag: string }): string => {
  const fields = e as { readonly message?: unknown; readonly msg?: unknown }
  return typeof fields.message === "string" ? fields.message : typeof fields.msg === "string" ? fields.msg : e._tag
}

/** One attempt at one market. */
export const attemptTimeoutMs = 5_000

/** Every market listing `asset` expires `grantId`'s orders; markets that never answered within `budgetMs` are logged. */
export const expireInMarkets = (grantId: string, asset: string, budgetMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const markets = yield* sql<{ symbol: string }>`SELECT symbol FROM markets WHERE base = ${asset} OR quote = ${asset} ORDER BY symbol`.pipe(Effect.orDie)
    if (markets.length === 0) return 0
    const client = yield* Market.client
    const retry = Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.millis(attemptTimeoutMs))))
    let expired = 0
    for (const { symbol } of markets) {
      const answer = yield* client(symbol).ExpireGrant(new ExpireGrant({ grantId })).pipe(
        Effect.timeoutFail({ duration: Duration.millis(attemptTimeoutMs), onTimeout: () => ({ _tag: "Timeout" as const, message: "no answer" }) }),
        Effect.tapError((e) => Effect.logDebug(`market ${symbol} ExpireGrant: ${e._tag}`)),
        // A refusal is an answer: asking again would get the same one.
        Effect.retry({ schedule: retry, while: (e) => e._tag !== "OrderRefused" }),
        Effect.timeoutFail({ duration: Duration.millis(budgetMs), onTimeout: () => ({ _tag: "Timeout" as const, message: `no answer within ${budgetMs} ms` }) }),
        Effect.either
      )
      if (answer._tag === "Right") expired += answer.right
      else yield* Effect.logWarning(`market ${symbol} did not expire the orders of grant ${grantId}: ${describe(answer.left)}`)
    }
    return expired
  })
