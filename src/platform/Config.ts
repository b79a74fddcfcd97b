// Every setting comes from a SHARDLINE_* variable with a documented default (README has the table).
// Plain HOST/PORT are never read: the cluster's own layers would pick them up, so every sharding
// setting is passed explicitly from here.
import { Config, ConfigProvider, Context, Duration, Effect, Layer, Option, Redacted } from "effect"

export interface AppConfigShape {
  readonly httpHost: string
  readonly httpPort: number
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
  /** "single" = SingleRunner (embedded default); "socket" = NodeClusterSocket runner. */
  readonly topology: "single" | "socket"
  readonly shardsPerGroup: number
  readonly entityMessagePollMs: number
  readonly shardLockRefreshMs: number
  readonly shardLockExpirationMs: number
  readonly runnerHealthCheckMs: number
  readonly rateLimitKeyWeightPerMin: number
  readonly rateLimitIpWeightPerMin: number
  readonly pruneMessagesOlderThan: Duration.Duration
  readonly poolSize: number
  readonly trustProxy: boolean
  /** Bearer token for /ops and /metrics; unset = open (see src/platform/http/opsAccess.ts). */
  readonly opsToken: Option.Option<Redacted.Redacted>
}

export class AppConfig extends Context.Tag("shardline/AppConfig")<AppConfig, AppConfigShape>() {}

const env = (name: string) => `SHARDLINE_${name}`

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  httpHost: Config.string(env("HTTP_HOST")).pipe(Config.withDefault("127.0.0.1")),
  httpPort: Config.port(env("HTTP_PORT")).pipe(Config.withDefault(8080)),
  databaseUrl: Config.option(Config.redacted(env("DATABASE_URL"))).pipe(
    Config.map(Option.filter((u) => Redacted.value(u).trim() !== ""))
  ),
  dataDir: Config.string(env("DATA_DIR")).pipe(Config.withDefault("./.data")),
  embeddedEngine: Config.literal("auto", "postgres", "pglite")(env("EMBEDDED_ENGINE")).pipe(Config.withDefault("auto" as const)),
  masterKey: Config.option(Config.redacted(env("MASTER_KEY"))),
  runnerHost: Config.string(env("RUNNER_HOST")).pipe(Config.withDefault("127.0.0.1")),
  runnerPort: Config.port(env("RUNNER_PORT")).pipe(Config.withDefault(34431)),
  topology: Config.literal("single", "socket")(env("TOPOLOGY")).pipe(Config.withDefault("single" as const)),
  shardsPerGroup: Config.integer(env("SHARDS_PER_GROUP")).pipe(Config.withDefault(300)),
  entityMessagePollMs: Config.integer(env("MESSAGE_POLL_MS")).pipe(Config.withDefault(1000)),
  shardLockRefreshMs: Config.integer(env("SHARD_LOCK_REFRESH_MS")).pipe(Config.withDefault(1000)),
  shardLockExpirationMs: Config.integer(env("SHARD_LOCK_EXPIRATION_MS")).pipe(Config.withDefault(4000)),
  runnerHealthCheckMs: Config.integer(env("RUNNER_HEALTH_CHECK_MS")).pipe(Config.withDefault(1000)),
  rateLimitKeyWeightPerMin: Config.integer(env("RATE_LIMIT_KEY_WEIGHT")).pipe(Config.withDefault(1200)),
  rateLimitIpWeightPerMin: Config.integer(env("RATE_LIMIT_IP_WEIGHT")).pipe(Config.withDefault(1200)),
  pruneMessagesOlderThan: Config.duration(env("PRUNE_MESSAGES_AFTER")).pipe(Config.withDefault(Duration.days(7))),
  poolSize: Config.integer(env("DB_POOL_SIZE")).pipe(Config.withDefault(10)),
  trustProxy: Config.boolean(env("TRUST_PROXY")).pipe(Config.withDefault(false)),
  opsToken: Config.option(Config.redacted(env("OPS_TOKEN"))).pipe(
    Config.map(Option.filter((t) => Redacted.value(t).trim() !== ""))
  )
})

/** Reads the config from the process environment (or a given map, for tests). */
export const layer = (vars?: Record<string, string>): Layer.Layer<AppConfig, import("effect/ConfigError").ConfigError> =>
  Layer.effect(
    AppConfig,
    vars === undefined
      ? appConfig
      : Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(vars))))
  )
