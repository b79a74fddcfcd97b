// Order endpoints: SIGNED with the trade scope. The checks in front of the Market entity live
// here (key, scope, mandatory parameters, symbol); matching and settlement are the Market
// actor's (a later issue), and until markets are listed every symbol is refused with -1121.
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../schemas/exchange/api.ts"
import { apiError, messages } from "../../../schemas/exchange/errors.ts"
import { verifySigned } from "../auth/SignedRequest.ts"
import { findMarket } from "../markets.ts"

const required = (params: ReadonlyMap<string, string>, names: ReadonlyArray<string>) =>
  Effect.forEach(names, (name) => {
    const v = params.get(name)
    return v === undefined || v === "" ? Effect.fail(apiError(-1102, messages.missing(name))) : Effect.succeed(v)
  })

const marketOf = (symbol: string) => {
  const market = findMarket(symbol)
  return market ? Effect.succeed(market) : Effect.fail(apiError(-1121, "Invalid symbol."))
}

export const OrderHandlers = HttpApiBuilder.group(Api, "order", (handlers) =>
  handlers
    .handle("newOrder", () =>
      Effect.gen(function*() {
        const { params } = yield* verifySigned("trade")
        const [symbol] = yield* required(params, ["symbol", "side", "price", "quantity"])
        yield* marketOf(symbol!)
        return yield* Effect.fail(apiError(-2010, "Market is closed."))
      }))
    .handle("cancelOrder", () =>
      Effect.gen(function*() {
        const { params } = yield* verifySigned("trade")
        const [symbol] = yield* required(params, ["symbol"])
        if (!params.get("orderId") && !params.get("origClientOrderId")) {
          return yield* Effect.fail(apiError(-1102, messages.missing("orderId")))
        }
        yield* marketOf(symbol!)
        return yield* Effect.fail(apiError(-2011, "Unknown order sent."))
      })))
