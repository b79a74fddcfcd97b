// The node's chains, from config: `UtxoLedger` (the token ledger) and `EvmLedgers` (ethereum,
// base, bsc), each either an in-process devnet or a real node. Unset URLs mean devnets, which
// live and die with the node's scope (their block clocks stop with it).
//
// Startup refusals are ConfigErrors naming the setting to fix, so the process prints one line
// instead of a stack trace; none of them repeats a URL or a key.
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { ConfigError, Context, Effect, Either, Layer, Option, Redacted } from "effect"
import { AppConfig, type AppConfigShape } from "./Config.ts"
import { invalidSetting } from "./settings.ts"
import { SecretBox, type SecretBoxShape } from "./SecretBox.ts"
import { layerDevnet as evmDevnet } from "../chain/evm/devnet.ts"
import { evmChainNames, type EvmChain, type EvmChainMismatch, type EvmInvalidInput, EvmLedgers, type EvmRpcError } from "../chain/evm/EvmLedger.ts"
import { layerViem } from "../chain/evm/viemLedger.ts"
import { CoinLedgers } from "../chain/ledger/CoinLedgers.ts"
import { layerDevnet as ledgerDevnet, makeUtxoDevnet } from "../chain/ledger/devnet.ts"
import { devnetFaucetAddress, fundCoinFaucet, fundDevnetFaucet } from "../chain/ledger/devnetFaucet.ts"
import { layerRpc, makeRpcLedger, rpcEndpoint } from "../chain/ledger/rpcLedger.ts"
import { UtxoLedger, type UtxoLedgerShape } from "../chain/ledger/UtxoLedger.ts"
import { type CoinChain, coinChainNames, coinChains, ledgerParams } from "../chain/params.ts"
import { layer as signerPoolLayer, SignerPool } from "../chain/signerPool.ts"

export type ChainKind = "devnet" | "rpc"

export const ledgerKind = (config: AppConfigShape): ChainKind => (Option.isSome(config.ledgerRpcUrl) ? "rpc" : "devnet")
export const evmKind = (config: AppConfigShape): ChainKind => (Option.isSome(config.evmRpcUrls) ? "rpc" : "devnet")

/** The setting naming a coin chain's node, and its value. */
export const coinRpcSetting = (chain: CoinChain) => (chain === "btc" ? "BTC_RPC_URL" : "LTC_RPC_URL")
export const coinRpcUrl = (config: AppConfigShape, chain: CoinChain) => (chain === "btc" ? config.btcRpcUrl : config.ltcRpcUrl)
export const coinKind = (config: AppConfigShape, chain: CoinChain): ChainKind => (Option.isSome(coinRpcUrl(config, chain)) ? "rpc" : "devnet")

/** How often the token ledger is expected to make a block, ms: the setting, else the devnet's clock (1 s when it mines on demand), else Litecoin's 150 s. */
export const expectedBlockMs = (config: AppConfigShape): number =>
  Option.getOrElse(config.ledgerBlockMs, () => (ledgerKind(config) === "rpc" ? 150_000 : config.devnetBlockMs > 0 ? config.devnetBlockMs : 1_000))

/**
 * Unconfirmed ancestors a transaction may have, itself included: bitcoind and litecoind refuse
 * more than 25 by default (`-limitancestorcount`); the devnet sets no limit.
 */
export const unconfirmedAncestorsMax = (config: AppConfigShape): number => (ledgerKind(config) === "rpc" ? 25 : 1_000_000)

/** The EVM chains this node serves: the configured ones, or all three devnets. */
export const evmChainsOf = (config: AppConfigShape): ReadonlyArray<EvmChain> =>
  Option.match(config.evmRpcUrls, { onNone: () => evmChainNames, onSome: (urls) => urls.map((u) => u.chain) })

/** The devnet hot wallet's key, sealed with the master key, under the data dir. */
export const devnetKeyFile = "evm-devnet-hot-wallet.sealed"


/**
 * Setups that cannot work: a ledger URL the adapter cannot use, EVM nodes without a hot-wallet
 * key, and devnets on a multi-node cluster. A socket-topology node with a devnet would run a chain of its own, so
 * a transaction one node sent would not exist for the node that takes the entity over: refused
 * unless SHARDLINE_DEVNET_PER_NODE says a separate chain per node is what is wanted.
 */
export const checkChainSettings = (config: AppConfigShape): Effect.Effect<void, ConfigError.ConfigError> => {
  if (Option.isSome(config.ledgerRpcUrl)) {
    const endpoint = rpcEndpoint(Redacted.value(config.ledgerRpcUrl.value).trim())
    if (Either.isLeft(endpoint)) {
      return Effect.fail(invalidSetting("LEDGER_RPC_URL", `${endpoint.left.message} (expected a bitcoind-compatible JSON-RPC URL such as http://user:password@127.0.0.1:19443/)`))
    }
  }
  for (const chain of coinChainNames) {
    const url = coinRpcUrl(config, chain)
    if (Option.isNone(url)) continue
    const endpoint = rpcEndpoint(Redacted.value(url.value).trim())
    if (Either.isLeft(endpoint)) {
      return Effect.fail(invalidSetting(coinRpcSetting(chain), `${endpoint.left.message} (expected a bitcoind-compatible JSON-RPC URL such as http://user:password@127.0.0.1:18443/)`))
    }
  }
  const devnets = [...(ledgerKind(config) === "devnet" ? ["the ledger (SHARDLINE_LEDGER_RPC_URL unset)"] : []), ...(evmKind(config) === "devnet" ? ["EVM (SHARDLINE_EVM_RPC_URLS unset)"] : [])]
  if (config.topology === "socket" && devnets.length > 0 && !config.devnetPerNode) {
    return Effect.fail(invalidSetting(
      "TOPOLOGY",
      `a socket-topology node would run its own in-process devnet for ${devnets.join(" and ")}, a different chain on every node; ` +
        "set those URLs to nodes all runners share, or set SHARDLINE_DEVNET_PER_NODE=true to accept a separate devnet per node"
    ))
  }
  if (evmKind(config) === "rpc" && Option.isNone(config.evmHotWalletKey)) {
    return Effect.fail(invalidSetting("EVM_HOT_WALLET_KEY", "is required when SHARDLINE_EVM_RPC_URLS is set (0x followed by 64 hex characters)"))
  }
  return Effect.void
}

/** Reads the devnet hot wallet's key from the data dir, creating it on first start. */
export const loadDevnetHotWalletKey = (dataDir: string, box: SecretBoxShape): Effect.Effect<Redacted.Redacted<string>, ConfigError.ConfigError> =>
  Effect.try({
    try: () => {
      const file = join(dataDir, devnetKeyFile)
      if (!existsSync(file)) {
        mkdirSync(dataDir, { recursive: true })
        const key = `0x${randomBytes(32).toString("hex")}`
        writeFileSync(file, box.seal(key) + "\n", { mode: 0o600, flag: "wx" })
      }
      return Redacted.make(box.open(readFileSync(file, "utf8").trim()))
    },
    catch: () =>
      invalidSetting("DATA_DIR", `${devnetKeyFile} cannot be read or opened with this master key; delete it to start the EVM devnets with a new hot wallet`)
  })

const ledgerLayer = (config: AppConfigShape): Layer.Layer<UtxoLedger, ConfigError.ConfigError> =>
  Option.match(config.ledgerRpcUrl, {
    onNone: () => {
      // The clock pays the faucet, so `devnet pay` never runs dry on a long-running devnet.
      const clock = { blockIntervalMs: config.devnetBlockMs, clockMineTo: devnetFaucetAddress(ledgerParams) }
      return ledgerDevnet(ledgerParams, config.devnetBlockMs > 0 ? clock : {}).pipe(
        Layer.tap((context) => fundDevnetFaucet(Context.get(context, UtxoLedger)))
      )
    },
    onSome: (url) =>
      // `nodeParams` is used only by `mine`, which the node never calls.
      layerRpc({ url: Redacted.value(url).trim(), params: ledgerParams, nodeParams: ledgerParams }).pipe(
        Layer.mapError((e) => invalidSetting("LEDGER_RPC_URL", e.message))
      )
  })

/**
 * BTC and LTC: a devnet with that chain's regtest params (the clock pays its faucet, which gets
 * mature coinbases at start), or the node at its URL. Coin devnets on a socket-topology node are
 * per node like the others would be; they are not refused (nothing of the wrap desk moves coins
 * yet), only logged.
 */
const coinLayer = (config: AppConfigShape): Layer.Layer<CoinLedgers> =>
  Layer.scoped(CoinLedgers, Effect.gen(function*() {
    const ledgers = new Map<CoinChain, UtxoLedgerShape>()
    for (const chain of coinChainNames) {
      const { params } = coinChains[chain]
      const url = coinRpcUrl(config, chain)
      if (Option.isSome(url)) {
        // checkChainSettings has refused a URL the adapter cannot use.
        ledgers.set(chain, makeRpcLedger({ url: Redacted.value(url.value).trim(), params, nodeParams: params }))
        continue
      }
      const clock = { blockIntervalMs: config.devnetBlockMs, clockMineTo: devnetFaucetAddress(params) }
      const handle = yield* Effect.acquireRelease(
        Effect.sync(() => makeUtxoDevnet({ params, ...(config.devnetBlockMs > 0 ? clock : {}) })),
        (h) => Effect.sync(() => h.close())
      )
      yield* fundCoinFaucet(handle.ledger)
      ledgers.set(chain, handle.ledger)
    }
    return CoinLedgers.of({ chains: coinChainNames, get: (chain) => ledgers.get(chain)! })
  }))

type EvmStartError = ConfigError.ConfigError | EvmInvalidInput | EvmRpcError | EvmChainMismatch

/** Why the EVM ledgers did not start, as the setting to fix. */
const evmRefusal = (e: EvmStartError): ConfigError.ConfigError => {
  switch (e._tag) {
    case "EvmInvalidInput":
      return invalidSetting("EVM_HOT_WALLET_KEY", "is not a valid secp256k1 private key (the value is not shown)")
    case "EvmChainMismatch":
      return invalidSetting("EVM_RPC_URLS", `the node for ${e.chain} serves chain id ${e.actual}, not ${e.expected}`)
    case "EvmRpcError":
      return invalidSetting("EVM_RPC_URLS", `the node for ${e.chain} did not answer ${e.method}: ${e.message}`)
    default:
      return e
  }
}

const evmLayer = (config: AppConfigShape): Layer.Layer<EvmLedgers, ConfigError.ConfigError, SecretBox> =>
  Option.match(config.evmRpcUrls, {
    onNone: (): Layer.Layer<EvmLedgers, EvmStartError, SecretBox> =>
      Layer.unwrapEffect(Effect.gen(function*() {
        const hotWalletKey = Option.isSome(config.evmHotWalletKey)
          ? config.evmHotWalletKey.value
          : yield* loadDevnetHotWalletKey(config.dataDir, yield* SecretBox)
        return evmDevnet({ hotWalletKey, tokens: true, mining: config.devnetBlockMs > 0 ? { mode: "interval", intervalMs: config.devnetBlockMs } : { mode: "auto" } })
      })),
    onSome: (urls): Layer.Layer<EvmLedgers, EvmStartError, SecretBox> =>
      layerViem({
        // checkChainSettings has refused a missing key before this runs.
        hotWalletKey: Option.getOrElse(config.evmHotWalletKey, () => Redacted.make("")),
        rpcUrls: Object.fromEntries(urls.map((u) => [u.chain, Redacted.value(u.url)]))
      })
  }).pipe(Layer.mapError(evmRefusal))

/** UtxoLedger, CoinLedgers and EvmLedgers for a node, as its config says. */
export const layer: Layer.Layer<UtxoLedger | EvmLedgers | CoinLedgers | SignerPool, ConfigError.ConfigError, AppConfig | SecretBox> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* checkChainSettings(config)
    const clock = config.devnetBlockMs > 0 ? `a block every ${config.devnetBlockMs} ms` : "blocks on demand"
    yield* Effect.logInfo(
      `chains: ledger ${ledgerKind(config) === "rpc" ? "over JSON-RPC" : `devnet (${clock})`}; ` +
        `EVM ${evmChainsOf(config).join(", ")} ${evmKind(config) === "rpc" ? "over JSON-RPC" : `devnets (${clock})`}; ` +
        coinChainNames.map((c) => `${c} ${coinKind(config, c) === "rpc" ? "over JSON-RPC" : "devnet"}`).join(", ")
    )
    if (config.topology === "socket" && (ledgerKind(config) === "devnet" || evmKind(config) === "devnet")) {
      yield* Effect.logWarning("SHARDLINE_DEVNET_PER_NODE: this node's devnet chains are its own; other nodes cannot see them")
    }
    return Layer.mergeAll(ledgerLayer(config), evmLayer(config), coinLayer(config), signerPoolLayer({ workers: config.signingWorkers }))
  })
)
