// The shared floor of a node, as the services see it: the chains (UtxoLedger, EvmLedgers,
// CoinLedgers) and what sits on them (the Omni view, token decimals, the fee sponsor, the coin
// faucets of a devnet), the secret box, sessions, rate limits, the ops feed and monitors, and the
// node's own entities (devnet commands, sign-in challenges, the ops reporter). It knows no
// service: what it needs from them are ports the node fills (DevnetBacking, LedgerRegistry).
import { Layer } from "effect"
import * as ChainsLive from "./ChainsLive.ts"
import * as DevnetChains from "./devnet/DevnetChains.ts"
import * as DevnetCoinFaucets from "./devnet/coinFaucets.ts"
import * as DevnetEntity from "./devnet/DevnetEntity.ts"
import * as FeeSponsor from "./ledger/FeeSponsor.ts"
import * as LedgerRegistry from "./ledger/LedgerRegistry.ts"
import * as OmniViewIndexer from "./ledger/OmniViewIndexer.ts"
import { NodeIdentity } from "./NodeIdentity.ts"
import * as ChainMonitor from "./ops/ChainMonitor.ts"
import * as LoopStalls from "./ops/loopStalls.ts"
import * as NodeReporter from "./ops/NodeReporter.ts"
import * as OpsFeed from "./ops/OpsFeed.ts"
import * as RateLimiter from "./RateLimiter.ts"
import * as SecretBox from "./SecretBox.ts"
import * as SignInChallengeEntity from "./signin/SignInChallengeEntity.ts"
import * as StaleReads from "./entity/staleReads.ts"
import * as WebSessions from "./signin/WebSessions.ts"
import * as TokenDecimals from "../chain/evm/TokenDecimals.ts"

/** The chains, the secret box and the node's name: what everything else stands on. */
export const base = (nodeName: string) =>
  ChainsLive.layer.pipe(Layer.provideMerge(SecretBox.layer), Layer.provideMerge(Layer.succeed(NodeIdentity, { name: nodeName })))

/** The services' registered ledger properties, each service's list given by the node. */
export const ledgerRegistry = LedgerRegistry.layer

/** The devnet commands' service (pay, mine, issue); needs the services' DevnetBacking when a token is backed. */
export const devnet = DevnetChains.layer

/** The services every service may use, over `base` and `devnet`. */
export const services = Layer.mergeAll(OpsFeed.layer, WebSessions.layer, RateLimiter.layer, ChainMonitor.layer, FeeSponsor.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(OmniViewIndexer.layer, TokenDecimals.layer, DevnetCoinFaucets.layer))
)

/** The platform's own entities and background work. */
export const entities = Layer.mergeAll(DevnetEntity.layer, SignInChallengeEntity.layer, NodeReporter.layer, StaleReads.layer, LoopStalls.layer)
