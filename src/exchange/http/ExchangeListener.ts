// The exchange's listener (../shared/INTERFACES.md): its HttpApi, OpenAPI documents and docs page,
// `{code, msg}` errors, key auth and per-key weights, the market-data fast lane and streams, the
// signed lane when it is on, and the node's /ops and /metrics.
import { Effect, Layer } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { prefix } from "../../../schemas/exchange/public.ts"
import { AppConfig } from "../../platform/Config.ts"
import { listener as serviceListener, sharedListenerOptions } from "../../platform/http/Listener.ts"
import { OpsFeed } from "../../platform/ops/OpsFeed.ts"
import { opsRoutes } from "../../platform/ops/OpsRoutes.ts"
import { tracingOn } from "../../platform/telemetry/Telemetry.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import { MarketData } from "../marketdata/MarketData.ts"
import { makeStreams } from "../marketdata/sse.ts"
import { MarketRegistry } from "../markets/MarketRegistry.ts"
import { exchangeEdge, exchangeOpsRefused, exchangeOpsRefusedReply } from "./ExchangeEdge.ts"
import { exchangeDecodeError, exchangeHandlers, exchangeWebApp } from "./ExchangeHttp.ts"
import { fastMarketData, marketDataView } from "./MarketDataHandlers.ts"
import { makeSignedLane } from "./SignedLane.ts"
import { exchangeBaseUrl } from "./WebAppHandlers.ts"

export const listener = Layer.unwrapEffect(Effect.gen(function*() {
  const [config, exchange, registry, data, ops] = yield* Effect.all([AppConfig, ExchangeConfig, MarketRegistry, MarketData, OpsFeed])
  const view = marketDataView(registry, data)
  const streams = makeStreams(data, view)
  // With tracing on, signed calls take the Effect path, which makes each request's server span.
  // Off by default: its case-by-case equivalence test has not passed yet (issue 22, docs/operations.md).
  const signedLane = tracingOn(config.telemetry) || !exchange.httpSignedLane ? undefined : yield* makeSignedLane
  return serviceListener({
    ...sharedListenerOptions(config),
    edge: exchangeEdge({ keyWeightPerMin: exchange.rateLimitKeyWeightPerMin, ipWeightPerMin: exchange.rateLimitIpWeightPerMin }, registry.all, {
      fast: fastMarketData(view),
      stream: streams.route,
      closeStreams: streams.closeAll
    }, signedLane, { stream: ops.stream(exchangeOpsRefusedReply), closeStreams: ops.closeAll }),
    api: ExchangeApi,
    handlers: exchangeHandlers,
    decodeError: exchangeDecodeError,
    port: exchange.httpPort,
    portSetting: "SHARDLINE_HTTP_PORT",
    publicUrl: yield* exchangeBaseUrl,
    openApiPaths: [`${prefix}/openapi.json`, "/openapi.json"],
    docsPath: "/api-docs",
    routes: Layer.mergeAll(opsRoutes(exchangeOpsRefused), exchangeWebApp)
  })
}))
