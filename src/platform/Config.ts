// Every setting comes from a SHARDLINE_* variable with a documented default (README has the table).
// Plain HOST/PORT are never read: the cluster's own layers would pick them up, so every sharding
// setting is passed explicitly from here.
import { resolve } from "node:path"
import { Config, ConfigError, ConfigProvider, Context, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import type { EvmChain } from "../chain/evm/chains.ts"
import { type EdgeSettings, edgeSettingsConfig } from "./http/EdgeSettings.ts"
import { parseTokenContracts, type TokenContract } from "../chain/evm/tokenContracts.ts"
import { telemetryConfig, type TelemetryConfigShape } from "./telemetry/TelemetryConfig.ts"

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
  readonly httpPort: number
  readonly deskHttpPort: number
  readonly socialHttpPort: number
  /** Hot public GETs answered in node:http before Effect (src/platform/http/Edge.ts); off = all through Effect. */
  readonly httpFastLane: boolean
  /** Signed order calls answered in node:http (src/exchange/http/SignedLane.ts); off until its equivalence test passes (issue 22). */
  readonly httpSignedLane: boolean
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
  readonly rateLimitKeyWeightPerMin: number
  readonly rateLimitIpWeightPerMin: number
  /** Desk and social listeners: request weight per client IP per minute. */
  readonly deskIpWeightPerMin: number
  /** Desk transparency and registry reads (keyless, cached): their own per-IP fair-use ceiling, apart from deskIpWeightPerMin. */
  readonly deskPublicIpWeightPerMin: number
  readonly socialIpWeightPerMin: number
  /** HMAC key of the desk's reserve attestations; unset: generated once, sealed with the master key in desk_secrets. */
  readonly attestationKey: Option.Option<Redacted.Redacted>
  /** The Attestor's cadence, ms: 3600000 (the spec's "at least hourly"); shorter only for tests and demos. */
  readonly attestationIntervalMs: number
  /**
   * Dollar ERC-20 contracts per EVM chain (`SHARDLINE_EVM_TOKEN_CONTRACTS`, legacy `SHARDLINE_DESK_STABLECOINS`):
   * what the desk pays, takes and counts; a chain and symbol not listed is at the devnet's address (tokenContracts.ts).
   */
  readonly evmTokenContracts: ReadonlyArray<TokenContract>
  /** Desk callback URLs may be http:// (tests, local demos); https only otherwise. */
  readonly callbackAllowHttp: boolean
  readonly pruneMessagesOlderThan: Duration.Duration
  readonly poolSize: number
  readonly trustProxy: boolean
  /** The HTTP edge's trusted proxies, header and body timeouts, connections per IP (http/EdgeSettings.ts). */
  readonly httpEdge: EdgeSettings
  /** Bearer token for /ops and /metrics; unset = open (see src/platform/http/opsAccess.ts). */
  readonly opsToken: Option.Option<Redacted.Redacted>
  /** Shared secrets of the desk's inbound partner webhooks; unset: that endpoint answers 503. */
  readonly webhookSecretPartnerA: Option.Option<Redacted.Redacted>
  readonly webhookSecretPartnerB: Option.Option<Redacted.Redacted>
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
  /** Confirmations at which a settlement leg is final (its Settlement entity stops following it). */
  readonly settlementFinalDepth: number
  /** The token ledger's expected block interval, ms; unset: the devnet clock, or 150 s on a real node (ChainsLive.expectedBlockMs). */
  readonly ledgerBlockMs: Option.Option<number>
  /** How long after a grant's expiry its delegated key still opens, for the expiry sweep, ms (docs/exchange.md, "Settlement"). */
  readonly sweepGraceMs: number
  /** Public base URL of the desk listener (wallet-link QR URLs, manifest `from`); unset: http://host:port. */
  readonly deskPublicUrl: Option.Option<string>
  /** Public base URL of the social listener (sign-in QR, callback URLs, wallet-link); unset: http://host:port. */
  readonly socialPublicUrl: Option.Option<string>
  /** LinkedWallet balance sampling interval, ms (the spec's hourly; shorter only for tests and demos). */
  readonly rewardsSampleMs: number
  /**
   * An override of what rewards sample: this one Omni property. None (the default): the desk's own
   * dollar tokens from its registry (SUSD, XUSD), per token and in total.
   */
  readonly deskTokenProperty: Option.Option<number>
  /** Social content store backend (docs/social.md, "Storage"). */
  readonly socialContentStore: "postgres" | "filesystem"
  /** Largest content item (upload), bytes. */
  readonly socialContentBytesMax: number
  /** Verified content chunks kept in memory per node, bytes; 0 turns the cache off (docs/social.md, "Caches"). */
  readonly socialChunkCacheBytes: number
  /** What one writing action (a post) costs from the member's on-service balance, base units. */
  readonly socialPostPriceBase: bigint
  /** Balance a devnet account starts with (`social account create`), base units. */
  readonly socialStarterBalanceBase: bigint
  /** A post's paid hosting period, ms (docs/social.md, "Timers"). */
  readonly socialHostingPeriodMs: number
  /** After an unpaid period ends, how long the content is still served before it is unpinned, ms. */
  readonly socialGraceMs: number
  /** Account continuity: the recovery countdown from CHV1G to CHV1N, ms. */
  readonly socialContinuityCountdownMs: number
  /** A post whose stamps could not all go out: first retry after this long, doubling each time, ms. */
  readonly socialStampRetryMs: number
  /** The longest wait between two such retries, ms. */
  readonly socialStampRetryMaxMs: number
  /** How often a node looks for pending posts whose stamp timer was lost, ms (social/posts/stampingSweep.ts). */
  readonly socialStampSweepMs: number
  /** Member-signed stamps: how long the service waits for the member's signatures before the action lapses, ms. */
  readonly socialSignatureWindowMs: number
}

export class AppConfig extends Context.Tag("shardline/AppConfig")<AppConfig, AppConfigShape>() {}

const env = (name: string) => `SHARDLINE_${name}`

/** An integer setting with bounds: 0 or a negative would make a busy loop, a stalled pool or a lapsed lock. */
const boundedInt = (name: string, min: number, max: number) =>
  Config.integer(env(name)).pipe(Config.validate({ message: `must be an integer from ${min} to ${max}`, validation: (n) => n >= min && n <= max }))
/** Set by the test suite only. */
const forbiddenDataDir = process.env["SHARDLINE_FORBIDDEN_DATA_DIR"]

const intIn = (name: string, fallback: number, min: number, max: number) => boundedInt(name, min, max).pipe(Config.withDefault(fallback))

// Messages below never repeat a URL or key: they may carry a password or a provider's API key.
/** A refused setting, as the ConfigError a node prints in one line: `(Invalid data at SHARDLINE_<name>: "<message>")`. */
export const invalidSetting = (name: string, message: string) => ConfigError.InvalidData([env(name)], message)

const optionalRedacted = (name: string) =>
  Config.option(Config.redacted(env(name))).pipe(Config.map(Option.filter((v) => Redacted.value(v).trim() !== "")))

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

/** An http(s) origin with an optional path, no trailing slash, no credentials. */
const publicUrl = (name: string) =>
  Config.option(Config.string(env(name)).pipe(
    Config.validate({
      message: "must be an http(s) URL without a user name, password, query or fragment",
      validation: (u) => URL.canParse(u) && ["http:", "https:"].includes(new URL(u).protocol) && new URL(u).username === "" &&
        new URL(u).password === "" && new URL(u).search === "" && new URL(u).hash === ""
    }),
    Config.map((u) => u.replace(/\/+$/, ""))
  ))

const HOT_WALLET_KEY = /^(0x)?[0-9a-fA-F]{64}$/

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  telemetry: telemetryConfig,
  httpHost: Config.string(env("HTTP_HOST")).pipe(Config.withDefault("127.0.0.1")),
  httpPort: Config.port(env("HTTP_PORT")).pipe(Config.withDefault(8080)),
  deskHttpPort: Config.port(env("DESK_HTTP_PORT")).pipe(Config.withDefault(8180)),
  socialHttpPort: Config.port(env("SOCIAL_HTTP_PORT")).pipe(Config.withDefault(8280)),
  httpFastLane: Config.boolean(env("HTTP_FAST_LANE")).pipe(Config.withDefault(true)),
  httpSignedLane: Config.boolean(env("HTTP_SIGNED_LANE")).pipe(Config.withDefault(false)),
  databaseUrl: optionalRedacted("DATABASE_URL"),
  dataDir: Config.string(env("DATA_DIR")).pipe(Config.withDefault("./.data"), Config.mapOrFail((dir) =>
    // The test suite sets SHARDLINE_FORBIDDEN_DATA_DIR to the repository's ./.data (the user's own
    // `npm start` data): no test may read or write it (test/support/globalSetup.ts).
    forbiddenDataDir !== undefined && resolve(dir) === resolve(forbiddenDataDir)
      ? Either.left(ConfigError.InvalidData([env("DATA_DIR")], "is the data dir of your own `npm start`, which tests must not touch (SHARDLINE_FORBIDDEN_DATA_DIR): give the test its own SHARDLINE_DATA_DIR"))
      : Either.right(dir))),
  embeddedEngine: Config.literal("auto", "postgres", "pglite")(env("EMBEDDED_ENGINE")).pipe(Config.withDefault("auto" as const)),
  masterKey: Config.option(Config.redacted(env("MASTER_KEY"))),
  runnerHost: Config.string(env("RUNNER_HOST")).pipe(Config.withDefault("127.0.0.1")),
  runnerPort: Config.port(env("RUNNER_PORT")).pipe(Config.withDefault(34431)),
  runnerListenPort: Config.option(Config.port(env("RUNNER_LISTEN_PORT"))),
  topology: Config.literal("single", "socket")(env("TOPOLOGY")).pipe(Config.withDefault("single" as const)),
  shardsPerGroup: intIn("SHARDS_PER_GROUP", 300, 1, 10_000),
  entityMessagePollMs: intIn("MESSAGE_POLL_MS", 1000, 10, 60_000),
  shardLockRefreshMs: intIn("SHARD_LOCK_REFRESH_MS", 1000, 100, 60_000),
  shardLockExpirationMs: intIn("SHARD_LOCK_EXPIRATION_MS", 4000, 200, 600_000),
  runnerHealthCheckMs: intIn("RUNNER_HEALTH_CHECK_MS", 1000, 100, 600_000),
  shardWatchdogMs: intIn("SHARD_WATCHDOG_MS", 30_000, 5_000, 3_600_000),
  stopDrainMs: intIn("STOP_DRAIN_MS", 10_000, 0, 600_000),
  stopTimeoutMs: intIn("STOP_TIMEOUT_MS", 30_000, 1_000, 3_600_000),
  rateLimitKeyWeightPerMin: intIn("RATE_LIMIT_KEY_WEIGHT", 1200, 1, 1_000_000_000),
  rateLimitIpWeightPerMin: intIn("RATE_LIMIT_IP_WEIGHT", 1200, 1, 1_000_000_000),
  deskIpWeightPerMin: intIn("DESK_RATE_LIMIT_IP_WEIGHT", 6000, 1, 1_000_000_000),
  deskPublicIpWeightPerMin: intIn("DESK_PUBLIC_IP_WEIGHT", 60_000, 1, 1_000_000_000),
  socialIpWeightPerMin: intIn("SOCIAL_RATE_LIMIT_IP_WEIGHT", 6000, 1, 1_000_000_000),
  attestationKey: optionalRedacted("ATTESTATION_KEY"),
  attestationIntervalMs: intIn("ATTESTATION_INTERVAL_MS", 3_600_000, 1_000, 3_600_000),
  evmTokenContracts: Config.all([
    Config.option(Config.string(env("EVM_TOKEN_CONTRACTS"))),
    Config.option(Config.string(env("DESK_STABLECOINS")))
  ]).pipe(Config.mapOrFail(([current, legacy]): Either.Either<ReadonlyArray<TokenContract>, ConfigError.ConfigError> => {
    const [name, text] = Option.isSome(current) && current.value.trim() !== "" ? ["EVM_TOKEN_CONTRACTS", current.value] : ["DESK_STABLECOINS", Option.getOrElse(legacy, () => "")]
    return Either.mapLeft(parseTokenContracts(text), (m) => invalidSetting(name, m))
  })),
  callbackAllowHttp: Config.boolean(env("CALLBACK_ALLOW_HTTP")).pipe(Config.withDefault(false)),
  pruneMessagesOlderThan: Config.duration(env("PRUNE_MESSAGES_AFTER")).pipe(Config.withDefault(Duration.days(7))),
  poolSize: intIn("DB_POOL_SIZE", 10, 1, 1_000),
  trustProxy: Config.boolean(env("TRUST_PROXY")).pipe(Config.withDefault(false)),
  httpEdge: edgeSettingsConfig,
  opsToken: optionalRedacted("OPS_TOKEN"),
  webhookSecretPartnerA: optionalRedacted("WEBHOOK_SECRET_PARTNER_A"),
  webhookSecretPartnerB: optionalRedacted("WEBHOOK_SECRET_PARTNER_B"),
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
  devnetBlockMs: Config.integer(env("DEVNET_BLOCK_MS")).pipe(
    Config.validate({
      message: `must be 0 (blocks on demand only) or from ${devnetBlockMsMin} to ${devnetBlockMsMax} milliseconds`,
      validation: (ms) => ms === 0 || (ms >= devnetBlockMsMin && ms <= devnetBlockMsMax)
    }),
    // 10 s, not 1 s: every devnet block stays in the heap (about 0.7 KB on the ledger, 0.4 KB per
    // EVM chain; `npm run bench -- chain`): an idle `npm start` grows ~16 MB a day, ~160 MB at 1 s.
    Config.withDefault(10_000)
  ),
  devnetPerNode: Config.boolean(env("DEVNET_PER_NODE")).pipe(Config.withDefault(false)),
  settlementFinalDepth: intIn("SETTLEMENT_FINAL_DEPTH", 6, 1, 1_000),
  ledgerBlockMs: Config.option(Config.integer(env("LEDGER_BLOCK_MS")).pipe(
    Config.validate({ message: "must be an integer from 10 to 3600000 milliseconds", validation: (ms) => ms >= 10 && ms <= 3_600_000 })
  )),
  sweepGraceMs: intIn("SWEEP_GRACE_MS", 60_000, 0, 3_600_000),
  deskPublicUrl: publicUrl("DESK_PUBLIC_URL"),
  socialPublicUrl: publicUrl("SOCIAL_PUBLIC_URL"),
  rewardsSampleMs: intIn("REWARDS_SAMPLE_MS", 3_600_000, 1_000, 86_400_000),
  deskTokenProperty: Config.option(boundedInt("DESK_TOKEN_PROPERTY", 1, 0x7fffffff)),
  socialContentStore: Config.literal("postgres", "filesystem")(env("SOCIAL_CONTENT_STORE")).pipe(Config.withDefault("postgres" as const)),
  socialContentBytesMax: intIn("SOCIAL_CONTENT_BYTES_MAX", 50 * 1024 * 1024, 1, 2 * 1024 * 1024 * 1024),
  socialChunkCacheBytes: intIn("SOCIAL_CHUNK_CACHE_BYTES", 64 * 1024 * 1024, 0, 16 * 1024 * 1024 * 1024),
  socialPostPriceBase: intIn("SOCIAL_POST_PRICE", 10_000, 0, 100_000_000_000).pipe(Config.map(BigInt)),
  socialStarterBalanceBase: intIn("SOCIAL_STARTER_BALANCE", 100_000_000, 0, 100_000_000_000).pipe(Config.map(BigInt)),
  socialHostingPeriodMs: intIn("SOCIAL_HOSTING_PERIOD_MS", 30 * 24 * 3_600_000, 1_000, 3650 * 24 * 3_600_000),
  socialGraceMs: intIn("SOCIAL_GRACE_MS", 7 * 24 * 3_600_000, 0, 365 * 24 * 3_600_000),
  socialContinuityCountdownMs: intIn("SOCIAL_CONTINUITY_COUNTDOWN_MS", 7 * 24 * 3_600_000, 1_000, 365 * 24 * 3_600_000),
  socialStampRetryMs: intIn("SOCIAL_STAMP_RETRY_MS", 5_000, 100, 3_600_000),
  socialStampRetryMaxMs: intIn("SOCIAL_STAMP_RETRY_MAX_MS", 300_000, 100, 24 * 3_600_000),
  socialStampSweepMs: intIn("SOCIAL_STAMP_SWEEP_MS", 300_000, 200, 24 * 3_600_000),
  socialSignatureWindowMs: intIn("SOCIAL_SIGNATURE_WINDOW_MS", 24 * 3_600_000, 1_000, 30 * 24 * 3_600_000)
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
