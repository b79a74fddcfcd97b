// The three listeners of a node (../shared/INTERFACES.md): exchange, token desk, social, each its
// own HttpApi, OpenAPI document, docs page, error shape and auth, on its own port. The services
// define themselves in their folders; this is the only place that puts them side by side.
import { Effect, Layer } from "effect"
import { prefix } from "../schemas/exchange/public.ts"
import { exchangeEdge, exchangeOpsRefused, exchangeOpsRefusedReply } from "../src/exchange/http/ExchangeEdge.ts"
import { exchangeDecodeError, exchangeHandlers, exchangeWebApp } from "../src/exchange/http/ExchangeHttp.ts"
import { makeSignedLane } from "../src/exchange/http/SignedLane.ts"
import { AppConfig } from "../src/platform/Config.ts"
import { ExchangeConfig } from "../src/exchange/ExchangeConfig.ts"
import { DeskConfig } from "../src/desk/DeskConfig.ts"
import { SocialConfig } from "../src/social/SocialConfig.ts"
import { MarketRegistry } from "../src/exchange/markets/MarketRegistry.ts"
import { fastMarketData, marketDataView } from "../src/exchange/http/MarketDataHandlers.ts"
import { MarketData } from "../src/exchange/marketdata/MarketData.ts"
import { makeStreams } from "../src/exchange/marketdata/sse.ts"
import { listener } from "../src/platform/http/Listener.ts"
import { tracingOn } from "../src/platform/telemetry/Telemetry.ts"
import { OpsFeed } from "../src/platform/ops/OpsFeed.ts"
import { opsRoutes } from "../src/platform/ops/OpsRoutes.ts"
import { ExchangeApi } from "../schemas/exchange/api.ts"
import { DeskApi } from "../schemas/desk/api.ts"
import { SocialApi } from "../schemas/social/api.ts"
import { deskEdge, deskHandlers, deskWebApp } from "../src/desk/http/DeskHttp.ts"
import { Transparency } from "../src/desk/http/Transparency.ts"
import { decodeErrorShape } from "../src/platform/http/errorBodyEdge.ts"
import { socialEdge, socialHandlers, socialWebApp } from "../src/social/http/SocialHttp.ts"
import { ContentStore } from "../src/social/content/ContentStore.ts"

export const exchangeListener = Layer.unwrapEffect(Effect.gen(function*() {
  const [config, exchange, registry, data, ops] = yield* Effect.all([AppConfig, ExchangeConfig, MarketRegistry, MarketData, OpsFeed])
  const view = marketDataView(registry, data)
  const streams = makeStreams(data, view)
  // With tracing on, signed calls take the Effect path, which makes each request's server span.
  // Off by default: its case-by-case equivalence test has not passed yet (issue 22, docs/operations.md).
  const signedLane = tracingOn(config.telemetry) || !exchange.httpSignedLane ? undefined : yield* makeSignedLane
  return listener({
    edge: exchangeEdge({ keyWeightPerMin: exchange.rateLimitKeyWeightPerMin, ipWeightPerMin: exchange.rateLimitIpWeightPerMin }, registry.all, {
      fast: fastMarketData(view),
      stream: streams.route,
      closeStreams: streams.closeAll
    }, signedLane, { stream: ops.stream(exchangeOpsRefusedReply), closeStreams: ops.closeAll }),
    api: ExchangeApi,
    handlers: exchangeHandlers,
    decodeError: exchangeDecodeError,
    host: config.httpHost,
    port: exchange.httpPort,
    portSetting: "SHARDLINE_HTTP_PORT",
    openApiPaths: [`${prefix}/openapi.json`, "/openapi.json"],
    docsPath: "/api-docs",
    routes: Layer.mergeAll(opsRoutes(exchangeOpsRefused), exchangeWebApp),
    settings: config.httpEdge,
    fastLane: config.httpFastLane,
    serverSpans: tracingOn(config.telemetry)
  })
}))

/** The token desk: `{error: {code, message}}` bodies, its key auth, transparency open to any origin. */
export const deskListener = Layer.unwrapEffect(Effect.map(Effect.all([AppConfig, DeskConfig, Transparency]), ([config, desk, transparency]) =>
  listener({
    edge: deskEdge({ ipWeightPerMin: desk.deskIpWeightPerMin, publicIpWeightPerMin: desk.deskPublicIpWeightPerMin }, { "partner-a": desk.webhookSecretPartnerA, "partner-b": desk.webhookSecretPartnerB }, transparency),
    api: DeskApi,
    handlers: deskHandlers,
    decodeError: decodeErrorShape,
    host: config.httpHost,
    port: desk.deskHttpPort,
    portSetting: "SHARDLINE_DESK_HTTP_PORT",
    openApiPaths: ["/openapi.json"],
    docsPath: "/api-docs",
    routes: deskWebApp,
    settings: config.httpEdge,
    fastLane: config.httpFastLane,
    serverSpans: tracingOn(config.telemetry)
  })))

/** The social network: the desk's error shape, session auth, health open to any origin. */
export const socialListener = Layer.unwrapEffect(Effect.map(Effect.all([AppConfig, SocialConfig, ContentStore]), ([config, social, store]) =>
  listener({
    edge: socialEdge(social.socialIpWeightPerMin, social.socialContentBytesMax, store),
    api: SocialApi,
    handlers: socialHandlers,
    decodeError: decodeErrorShape,
    host: config.httpHost,
    port: social.socialHttpPort,
    portSetting: "SHARDLINE_SOCIAL_HTTP_PORT",
    openApiPaths: ["/openapi.json"],
    docsPath: "/api-docs",
    routes: socialWebApp,
    settings: config.httpEdge,
    fastLane: config.httpFastLane,
    serverSpans: tracingOn(config.telemetry)
  })))
