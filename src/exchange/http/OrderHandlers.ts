// Order endpoints: SIGNED with the trade scope; parameters arrive decoded by their schemas from
// exactly the signed bytes. Matching and settlement are the Market actor's (exchange trading
// issue); until markets are listed every symbol is refused with -1121.
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { apiError, messages } from "../../../schemas/exchange/errors.ts"
import { findMarket } from "../markets/symbols.ts"

const marketOf = (symbol: string) => {
  const market = findMarket(symbol)
  return market ? Effect.succeed(market) : Effect.fail(apiError(-1121, "Invalid symbol."))
}

export const OrderHandlers = HttpApiBuilder.group(ExchangeApi, "order", (handlers) =>
  handlers
    .handle("newOrder", ({ urlParams }) =>
      Effect.gen(function*() {
        yield* marketOf(urlParams.symbol)
        return yield* Effect.fail(apiError(-2010, "Market is closed."))
      }))
    .handle("cancelOrder", ({ urlParams }) =>
      Effect.gen(function*() {
        if (urlParams.orderId === undefined && urlParams.origClientOrderId === undefined) {
          return yield* Effect.fail(apiError(-1102, messages.missing("orderId")))
        }
        yield* marketOf(urlParams.symbol)
        return yield* Effect.fail(apiError(-2011, "Unknown order sent."))
      })))
