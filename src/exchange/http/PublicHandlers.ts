import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import { MarketRegistry } from "../markets/MarketRegistry.ts"
import { exchangeInfo, indexDocument, ping, serverTime } from "./publicBodies.ts"

export const PublicHandlers = HttpApiBuilder.group(ExchangeApi, "public", (handlers) =>
  Effect.gen(function*() {
    const config = yield* ExchangeConfig
    const registry = yield* MarketRegistry
    const limits = { keyWeightPerMin: config.rateLimitKeyWeightPerMin, ipWeightPerMin: config.rateLimitIpWeightPerMin }
    return handlers
      .handle("index", () => Effect.succeed(indexDocument))
      .handle("ping", () => Effect.sync(ping))
      .handle("time", () => Effect.sync(serverTime))
      .handle("exchangeInfo", () => Effect.sync(() => exchangeInfo(limits, registry.all())))
  }))
