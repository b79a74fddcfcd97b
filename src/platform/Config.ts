// The platform's settings: what every service shares (HTTP host and edge, database, data dir,
// cluster, chains, telemetry, ops). Each service reads its own settings in its own folder
// (exchange/ExchangeConfig.ts, desk/DeskConfig.ts, social/SocialConfig.ts); src/config.ts puts them
// side by side. Every setting comes from a SHARDLINE_* variable with a documented default (README
// has the table). Plain HOST/PORT are never read: the cluster's own layers would pick them up, so
// every sharding setting is passed explicitly from here.
import { resolve } from "node:path"
import { Config, ConfigError, ConfigProvider, Context, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import type { EvmChain } from "../chain/evm/chains.ts"
import { type EdgeSettings, edgeSettingsConfig } from "./http/EdgeSettings.ts"
import { parseTokenContracts, type TokenContract } from "../chain/evm/tokenContracts.ts"
import { telemetryConfig, type TelemetryConfigShape } from "./telemetry/TelemetryConfig.ts"
import { signingWorkersMax } from "../chain/signerPool.ts"
import { intIn, invalidSetting, optionalRedacted, settingName } from "./settings.ts"

/** One EVM chain served by a JSON-RPC node (`SHARDLINE_EVM_RPC_URLS`). */
export interface EvmRpcUrl {
  readonly chain: EvmChain
  /** Provider URLs often carry an API key in the path: kept out of logs and errors. */
  readonly url: Redacted.Redacted
}

/** Bounds of `SHARDLINE_DEVNET_BLOCK_MS` apart from 0 (the devnets' own clock floor is 10 ms). */
export const devnetBlockMsMin = 10
export const devnetBlockMsMax = 3_600_000

export interface AppConfigShape {
  /** Traces (OTLP) and the log format: platform/telemetry. */
  readonly telemetry: TelemetryConfigShape
  readonly httpHost: string
  /** Hot public GETs answered in node:http before Effect (src/platform/http/Edge.ts); off = all through Effect. */
  readonly httpFastLane: boolean
  /** Unset: the embedded Postgres under dataDir. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
  /** Embedded engine: auto (local postgres if its binaries exist, else PGlite), postgres, pglite. */
  readonly embeddedEngine: "auto" | "postgres" | "pglite"
  /** 32-byte key (hex) that encrypts secrets at rest; unset in embedded mode: generated under dataDir. */
  readonly masterKey: Option.Option<Redacted.Redacted>
  /** Multi-node only: this runner's address as other runners reach it. */
  readonly runnerHost: string
  readonly runnerPort: number
  /** The port the runner binds; unset = runnerPort. Differs when peers reach it through a proxy or NAT. */
  readonly runnerListenPort: Option.Option<number>
  /** "single" = SingleRunner (embedded default); "socket" = NodeClusterSocket runner. */
  readonly topology: "single" | "socket"
  /** Runner processes behind this node's listener ports (node:cluster, cluster/Primary.ts); 1 = this process is the node. */
  readonly processes: number
  /** Worker threads that build and sign settlement legs (src/chain/signerPool.ts); 0 = on the event loop. */
  readonly signingWorkers: number
  readonly shardsPerGroup: number
  readonly entityMessagePollMs: number
  readonly shardLockRefreshMs: number
  readonly shardLockExpirationMs: number
  readonly runnerHealthCheckMs: number
  /** Single runner: how long it may hold fewer than all its shards before it exits 1 (ops/ShardWatchdog.ts). */
  readonly shardWatchdogMs: number
  /** SIGTERM: how long in-flight requests may take to finish before the node closes anyway, ms. */
  readonly stopDrainMs: number
  /** SIGTERM: from the signal to the process's exit at the latest (then exit 1), ms. */
  readonly stopTimeoutMs: number
  /** From the process's start to its node built and serving at the latest (then exit 1), ms. */
  readonly startDeadlineMs: number
  /**
   * Dollar ERC-20 contracts per EVM chain (`SHARDLINE_EVM_TOKEN_CONTRACTS`, legacy `SHARDLINE_DESK_STABLECOINS`):
   * what the desk pays, takes and counts; a chain and symbol not listed is at the devnet's address (tokenContracts.ts).
   */
  readonly evmTokenContracts: ReadonlyArray<TokenContract>
  readonly pruneMessagesOlderThan: Duration.Duration
  readonly poolSize: number
  readonly trustProxy: boolean
  /** The HTTP edge's trusted proxies, header and body timeouts, connections per IP (http/EdgeSettings.ts). */
  readonly httpEdge: EdgeSettings
  /** Bearer token for /ops and /metrics; unset = open (see src/platform/http/opsAccess.ts). */
  readonly opsToken: Option.Option<Redacted.Redacted>
  /** Unset: the in-process ledger devnet. Set: a bitcoind-compatible JSON-RPC node (credentials in the URL). */
  readonly ledgerRpcUrl: Option.Option<Redacted.Redacted>
  /** The wrap desk's coin chains: unset = an in-process regtest devnet; set = a bitcoind-compatible node. */
  readonly btcRpcUrl: Option.Option<Redacted.Redacted>
  readonly ltcRpcUrl: Option.Option<Redacted.Redacted>
  /** Unset: in-process EVM devnets for ethereum, base and bsc. Set: these chains only, each over its node. */
  readonly evmRpcUrls: Option.Option<ReadonlyArray<EvmRpcUrl>>
  /** The EVM hot wallet's key (0x + 64 hex). Required with evmRpcUrls; for devnets generated when unset. */
  readonly evmHotWalletKey: Option.Option<Redacted.Redacted>
  /** Devnet block clock, milliseconds; 0 = blocks only on demand. */
  readonly devnetBlockMs: number
  /** Socket topology: accept in-process devnets, a separate chain on each node (tests, demos). */
  readonly devnetPerNode: boolean
  /** The token ledger's expected block interval, ms; unset: the devnet clock, or 150 s on a real node (ChainsLive.expectedBlockMs). */
  readonly ledgerBlockMs: Option.Option<number>
}

export class AppConfig extends Context.Tag("shardline/AppConfig")<AppConfig, AppConfigShape>() {}

/** Set by the test suite only. */
const forbiddenDataDir = process.env["SHARDLINE_FORBIDDEN_DATA_DIR"]

// The chain names without loading viem (every CLI command reads this module); `satisfies` keeps
// the list complete.
const evmChainSet = { ethereum: true, base: true, bsc: true } satisfies Record<EvmChain, true>
const evmChainNames = Object.keys(evmChainSet) as ReadonlyArray<EvmChain>

/** `ethereum=http://…,base=http://…`: each chain at most once, http or https. */
export const parseEvmRpcUrls = (text: string): Either.Either<ReadonlyArray<EvmRpcUrl>, string> => {
  const out: Array<EvmRpcUrl> = []
  for (const [i, entry] of text.split(",").map((e) => e.trim()).entries()) {
    const eq = entry.indexOf("=")
    if (eq < 0) return Either.left(`entry ${i + 1} is not chain=url (chains: ${evmChainNames.join(", ")})`)
    const name = entry.slice(0, eq).trim()
    const url = entry.slice(eq + 1).trim()
    const chain = evmChainNames.find((c) => c === name)
    if (chain === undefined) return Either.left(`unknown chain "${name.slice(0, 20)}" in entry ${i + 1} (chains: ${evmChainNames.join(", ")})`)
    if (out.some((u) => u.chain === chain)) return Either.left(`${chain} is listed twice`)
    if (!URL.canParse(url) || !["http:", "https:"].includes(new URL(url).protocol)) return Either.left(`the URL for ${chain} is not an http(s) URL`)
    out.push({ chain, url: Redacted.make(url) })
  }
  return Either.right(out)
}

/** 127.0.0.0/8, ::1 and localhost: the only binds where an unguarded /ops is acceptable. */
export const isLoopbackHost = (host: string): boolean =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

/** SHARDLINE_PROCESSES at most: each process is a runner with its own port and database pool. */
export const processesMax = 32

const HOT_WALLET_KEY = /^(0x)?[0-9a-fA-F]{64}$/

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  telemetry: telemetryConfig,
  httpHost: Config.string(settingName("HTTP_HOST")).pipe(Config.withDefault("127.0.0.1")),
  httpFastLane: Config.boolean(settingName("HTTP_FAST_LANE")).pipe(Config.withDefault(true)),
  databaseUrl: optionalRedacted("DATABASE_URL"),
  dataDir: Config.string(settingName("DATA_DIR")).pipe(Config.withDefault("./.data"), Config.mapOrFail((dir) =>
    // The test suite sets SHARDLINE_FORBIDDEN_DATA_DIR to the repository's ./.data (the user's own
    // `npm start` data): no test may read or write it (test/support/globalSetup.ts).
    forbiddenDataDir !== undefined && resolve(dir) === resolve(forbiddenDataDir)
      ? Either.left(ConfigError.InvalidData([settingName("DATA_DIR")], "is the data dir of your own `npm start`, which tests must not touch (SHARDLINE_FORBIDDEN_DATA_DIR): give the test its own SHARDLINE_DATA_DIR"))
      : Either.right(dir))),
  embeddedEngine: Config.literal("auto", "postgres", "pglite")(settingName("EMBEDDED_ENGINE")).pipe(Config.withDefault("auto" as const)),
  masterKey: Config.option(Config.redacted(settingName("MASTER_KEY"))),
  runnerHost: Config.string(settingName("RUNNER_HOST")).pipe(Config.withDefault("127.0.0.1")),
  runnerPort: Config.port(settingName("RUNNER_PORT")).pipe(Config.withDefault(34431)),
  runnerListenPort: Config.option(Config.port(settingName("RUNNER_LISTEN_PORT"))),
  topology: Config.literal("single", "socket")(settingName("TOPOLOGY")).pipe(Config.withDefault("single" as const)),
  processes: intIn("PROCESSES", 1, 1, processesMax),
  signingWorkers: intIn("SIGNING_WORKERS", 0, 0, signingWorkersMax),
  shardsPerGroup: intIn("SHARDS_PER_GROUP", 300, 1, 10_000),
  entityMessagePollMs: intIn("MESSAGE_POLL_MS", 1000, 10, 60_000),
  shardLockRefreshMs: intIn("SHARD_LOCK_REFRESH_MS", 1000, 100, 60_000),
  shardLockExpirationMs: intIn("SHARD_LOCK_EXPIRATION_MS", 4000, 200, 600_000),
  runnerHealthCheckMs: intIn("RUNNER_HEALTH_CHECK_MS", 1000, 100, 600_000),
  shardWatchdogMs: intIn("SHARD_WATCHDOG_MS", 30_000, 5_000, 3_600_000),
  stopDrainMs: intIn("STOP_DRAIN_MS", 10_000, 0, 600_000),
  stopTimeoutMs: intIn("STOP_TIMEOUT_MS", 30_000, 1_000, 3_600_000),
  startDeadlineMs: intIn("START_DEADLINE_MS", 600_000, 1_000, 86_400_000),
  evmTokenContracts: Config.all([
    Config.option(Config.string(settingName("EVM_TOKEN_CONTRACTS"))),
    Config.option(Config.string(settingName("DESK_STABLECOINS")))
  ]).pipe(Config.mapOrFail(([current, legacy]): Either.Either<ReadonlyArray<TokenContract>, ConfigError.ConfigError> => {
    const [name, text] = Option.isSome(current) && current.value.trim() !== "" ? ["EVM_TOKEN_CONTRACTS", current.value] : ["DESK_STABLECOINS", Option.getOrElse(legacy, () => "")]
    return Either.mapLeft(parseTokenContracts(text), (m) => invalidSetting(name, m))
  })),
  pruneMessagesOlderThan: Config.duration(settingName("PRUNE_MESSAGES_AFTER")).pipe(Config.withDefault(Duration.days(7))),
  poolSize: intIn("DB_POOL_SIZE", 10, 1, 1_000),
  trustProxy: Config.boolean(settingName("TRUST_PROXY")).pipe(Config.withDefault(false)),
  httpEdge: edgeSettingsConfig,
  opsToken: optionalRedacted("OPS_TOKEN"),
  // Checked where it is used (src/chain/ChainsLive.ts), before the node starts anything.
  ledgerRpcUrl: optionalRedacted("LEDGER_RPC_URL"),
  btcRpcUrl: optionalRedacted("BTC_RPC_URL"),
  ltcRpcUrl: optionalRedacted("LTC_RPC_URL"),
  evmRpcUrls: optionalRedacted("EVM_RPC_URLS").pipe(
    Config.mapOrFail((text): Either.Either<Option.Option<ReadonlyArray<EvmRpcUrl>>, ConfigError.ConfigError> =>
      Option.isNone(text)
        ? Either.right(Option.none())
        : Either.mapBoth(parseEvmRpcUrls(Redacted.value(text.value)), { onLeft: (m) => invalidSetting("EVM_RPC_URLS", m), onRight: Option.some })
    )
  ),
  evmHotWalletKey: optionalRedacted("EVM_HOT_WALLET_KEY").pipe(
    Config.mapOrFail((key): Either.Either<Option.Option<Redacted.Redacted>, ConfigError.ConfigError> => {
      if (Option.isNone(key)) return Either.right(key)
      const k = Redacted.value(key.value).trim()
      return HOT_WALLET_KEY.test(k)
        ? Either.right(Option.some(Redacted.make(k.startsWith("0x") ? k : `0x${k}`)))
        : Either.left(invalidSetting("EVM_HOT_WALLET_KEY", "must be 0x followed by 64 hex characters (the value is not shown)"))
    })
  ),
  devnetBlockMs: Config.integer(settingName("DEVNET_BLOCK_MS")).pipe(
    Config.validate({
      message: `must be 0 (blocks on demand only) or from ${devnetBlockMsMin} to ${devnetBlockMsMax} milliseconds`,
      validation: (ms) => ms === 0 || (ms >= devnetBlockMsMin && ms <= devnetBlockMsMax)
    }),
    // 10 s, not 1 s: every devnet block stays in the heap (about 0.7 KB on the ledger, 0.4 KB per
    // EVM chain; `npm run bench -- chain`): an idle `npm start` grows ~16 MB a day, ~160 MB at 1 s.
    Config.withDefault(10_000)
  ),
  devnetPerNode: Config.boolean(settingName("DEVNET_PER_NODE")).pipe(Config.withDefault(false)),
  ledgerBlockMs: Config.option(Config.integer(settingName("LEDGER_BLOCK_MS")).pipe(
    Config.validate({ message: "must be an integer from 10 to 3600000 milliseconds", validation: (ms) => ms >= 10 && ms <= 3_600_000 })
  )),
}).pipe(
  // A lock that expires before its next refresh would be lost by a healthy runner.
  Config.validate({
    message: "SHARDLINE_SHARD_LOCK_EXPIRATION_MS must be greater than SHARDLINE_SHARD_LOCK_REFRESH_MS",
    validation: (c) => c.shardLockExpirationMs > c.shardLockRefreshMs
  }),
  // /ops and /metrics show runner addresses, shard owners and traffic: open only on loopback.
  Config.validate({
    message: "SHARDLINE_HTTP_HOST is not a loopback address: set SHARDLINE_OPS_TOKEN so /ops and /metrics are not open to the network",
    validation: (c) => Option.isSome(c.opsToken) || isLoopbackHost(c.httpHost)
  })
)

/** Reads the config from the process environment (or a given map, for tests). */
export const layer = (vars?: Record<string, string>): Layer.Layer<AppConfig, import("effect/ConfigError").ConfigError> =>
  Layer.effect(
    AppConfig,
    vars === undefined
      ? appConfig
      : Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(vars))))
  )

/** A config error as one line for a person: `config: Invalid data at SHARDLINE_X: "…"`. */
export const configErrorLine = (error: ConfigError.ConfigError): string =>
  `config: ${String(error).replace(/^\((.*)\)$/s, "$1")}`

/**
 * For an entry point: a refused setting prints its one line on stderr and exits 1, instead of
 * the runtime's log record and stack. Other failures pass through unchanged.
 */
export const exitOnConfigError = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Extract<E, ConfigError.ConfigError>>, R> =>
  Effect.catchIf(self, (e: E): e is Extract<E, ConfigError.ConfigError> => ConfigError.isConfigError(e), (error) =>
    Effect.sync(() => {
      process.stderr.write(`${configErrorLine(error)}\n`)
      return process.exit(1)
    }))
