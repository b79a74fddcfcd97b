// One Shardline node: HTTP in front, entities behind, Postgres underneath. The embedded default
// and each node of a multi-node cluster are the same composition with a different topology.
import { Effect, Layer } from "effect"
import { AuthorizationLive } from "../src/exchange/authorization/AuthorizationEntity.ts"
import { MarketLive } from "../src/exchange/market/MarketEntity.ts"
import * as MarketActivator from "../src/exchange/markets/MarketActivator.ts"
import * as MarketRegistry from "../src/exchange/markets/MarketRegistry.ts"
import * as MarketData from "../src/exchange/marketdata/MarketData.ts"
import type { AppConfigShape } from "../src/platform/Config.ts"
import { configLayer, type NodeConfigShape } from "../src/config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import * as DevnetChains from "../src/platform/devnet/DevnetChains.ts"
import * as DevnetCoinFaucets from "../src/platform/devnet/coinFaucets.ts"
import { DevnetEntity } from "../src/platform/devnet/DevnetEntity.ts"
import * as DemoWorld from "../src/exchange/markets/DemoWorld.ts"
import { makeDeskWorld } from "../src/desk/tokens/DeskWorld.ts"
import * as Attestations from "../src/desk/attestation/Attestations.ts"
import * as AttestationMonitor from "../src/desk/attestation/AttestationMonitor.ts"
import { AttestorKick, AttestorLive } from "../src/desk/attestation/AttestorEntity.ts"
import { StampingSweep } from "../src/social/posts/stampingSweep.ts"
import * as Transparency from "../src/desk/http/Transparency.ts"
import * as ReserveScanner from "../src/desk/reserves/ReserveScanner.ts"
import * as DeskWallets from "../src/desk/wallets/DeskWallets.ts"
import * as DeskDevnetBacking from "../src/desk/tokens/devnetBacking.ts"
import { NodeIdentity } from "../src/platform/NodeIdentity.ts"
import * as ChainMonitor from "../src/platform/ops/ChainMonitor.ts"
import * as NodeReporter from "../src/platform/ops/NodeReporter.ts"
import * as OpsFeed from "../src/platform/ops/OpsFeed.ts"
import * as RateLimiter from "../src/platform/RateLimiter.ts"
import * as SecretBox from "../src/platform/SecretBox.ts"
import * as Telemetry from "../src/platform/telemetry/Telemetry.ts"
import { deskListener, exchangeListener, socialListener } from "./Listeners.ts"
import { single, socket } from "./topology.ts"
import * as AccountReadModel from "../src/exchange/account/AccountReadModel.ts"
import * as ApiKeys from "../src/exchange/auth/ApiKeys.ts"
import * as ChainsLive from "../src/platform/ChainsLive.ts"
import * as TokenDecimals from "../src/chain/evm/TokenDecimals.ts"
import * as DeskKeys from "../src/desk/keys/DeskKeys.ts"
import * as WebSessions from "../src/platform/signin/WebSessions.ts"
import * as ContentStoreLive from "../src/social/content/ContentStoreLive.ts"
import { PostLive } from "../src/social/posts/PostEntity.ts"
import { ContinuityLive } from "../src/social/accounts/ContinuityEntity.ts"
import * as TopUps from "../src/social/accounts/TopUps.ts"
import { SettlementLive } from "../src/exchange/settlement/SettlementEntity.ts"
import * as FeeSponsor from "../src/platform/ledger/FeeSponsor.ts"
import * as OmniViewIndexer from "../src/platform/ledger/OmniViewIndexer.ts"
import { DeskLinkTokenLive } from "../src/desk/identity/LinkTokenEntity.ts"
import { LinkedWalletLive } from "../src/desk/identity/LinkedWalletEntity.ts"
import { DeskOrderLive } from "../src/desk/orders/DeskOrderEntity.ts"
import { SocialLinkTokenLive } from "../src/social/identity/SocialLinkTokenEntity.ts"
import { SignInChallengeLive } from "../src/platform/signin/SignInChallengeEntity.ts"

/** The name a node goes by in ops, logs and Postgres' application_name (max 63 bytes). */
export const nodeName = (config: AppConfigShape) =>
  config.topology === "single" ? "shardline:embedded" : `shardline:${config.runnerHost}:${config.runnerPort}`

export const nodeLayer = (config: NodeConfigShape) => {
  const name = nodeName(config)
  // The chains (UtxoLedger, EvmLedgers), the Omni view over the ledger and the fee sponsor sit
  // beside the other services, for entities to use. The demo world (a devnet's market assets and
  // first markets) is made before any entity runs.
  const services = Layer.mergeAll(
    OpsFeed.layer, ApiKeys.layer, AccountReadModel.layer, DeskKeys.layer, WebSessions.layer, RateLimiter.layer, ChainMonitor.layer,
    // The exchange's demo world, then the desk's tokens: one after the other, so property ids are handed out in one order.
    Layer.effectDiscard(Effect.zipRight(DemoWorld.makeDemoWorld, makeDeskWorld)),
    MarketRegistry.layer, FeeSponsor.layer, MarketData.layer.pipe(Layer.provide(MarketRegistry.layer)), ContentStoreLive.layer
  ).pipe(
    // The desk's reserves, attestations and the transparency bodies, over its wallets and the Omni view.
    Layer.provideMerge(Transparency.layer),
    Layer.provideMerge(Layer.mergeAll(ReserveScanner.layer, Attestations.layer)),
    Layer.provideMerge(Layer.mergeAll(DeskWallets.layer, OmniViewIndexer.layer, TokenDecimals.layer)),
    // A devnet pays the desk's tokens backed, into the desk's vaults (docs/desk.md, "Token registry").
    Layer.provideMerge(DevnetCoinFaucets.layer),
    Layer.provideMerge(DevnetChains.layer.pipe(Layer.provide(DeskDevnetBacking.layer.pipe(Layer.provide(DeskWallets.layer))))),
    Layer.provideMerge(ChainsLive.layer),
    Layer.provideMerge(SecretBox.layer),
    Layer.provideMerge(Layer.succeed(NodeIdentity, { name }))
  )
  const cluster = config.topology === "single" ? single(config) : socket(config)
  return Layer.mergeAll(
    exchangeListener, deskListener, socialListener, AuthorizationLive, MarketLive, MarketActivator.layer, SettlementLive, DevnetEntity, NodeReporter.layer,
    DeskLinkTokenLive, LinkedWalletLive, DeskOrderLive, SocialLinkTokenLive, SignInChallengeLive, PostLive, ContinuityLive, TopUps.layer, StampingSweep, AttestorLive, AttestorKick,
    AttestationMonitor.layer
  ).pipe(
    // Kept in the output too, so a node run inside a test process can message its entities.
    Layer.provideMerge(cluster),
    // Kept in the output, so a node run inside a test process can reach its chains (test/support/node.ts).
    Layer.provideMerge(services),
    Layer.provide(databaseLayer({ applicationName: name, migrations })),
    // Refuse a chain setup that cannot work before anything starts (an embedded Postgres, say).
    Layer.provide(Layer.unwrapEffect(Effect.as(ChainsLive.checkChainSettings(config), configLayer(config)))),
    // Beneath everything: every fiber of the node inherits the tracer (or its absence) and the log format.
    Layer.provide(Telemetry.layer(config.telemetry, name))
  )
}
