// The exchange's own settings (shaped like @effect/cluster's ShardingConfig: a tag, defaults, a
// described Config and layers). Names and defaults are fixed by ../shared/INTERFACES.md; the
// README's table lists them. What every service shares is the platform's AppConfig.
import { Config, Context, Layer } from "effect"
import { intIn, settingName } from "../platform/settings.ts"

export interface ExchangeConfigShape {
  /** The exchange listener's port (`SHARDLINE_HTTP_PORT`). */
  readonly httpPort: number
  /** Signed order calls answered in node:http (src/exchange/http/SignedLane.ts); off until its equivalence test passes (issue 22). */
  readonly httpSignedLane: boolean
  /** Request weight per API key per minute. */
  readonly rateLimitKeyWeightPerMin: number
  /** Request weight per client IP per minute. */
  readonly rateLimitIpWeightPerMin: number
  /** Confirmations at which a settlement leg is final (its Settlement entity stops following it). */
  readonly settlementFinalDepth: number
  /** How long after a grant's expiry its delegated key still opens, for the expiry sweep, ms (docs/exchange.md, "Settlement"). */
  readonly sweepGraceMs: number
}

export class ExchangeConfig extends Context.Tag("shardline/ExchangeConfig")<ExchangeConfig, ExchangeConfigShape>() {}

export const defaults: ExchangeConfigShape = {
  httpPort: 8080,
  httpSignedLane: true,
  rateLimitKeyWeightPerMin: 1200,
  rateLimitIpWeightPerMin: 1200,
  settlementFinalDepth: 6,
  sweepGraceMs: 60_000
}

export const config: Config.Config<ExchangeConfigShape> = Config.all({
  httpPort: Config.port(settingName("HTTP_PORT")).pipe(Config.withDefault(defaults.httpPort), Config.withDescription("The exchange listener's port.")),
  httpSignedLane: Config.boolean(settingName("HTTP_SIGNED_LANE")).pipe(
    Config.withDefault(defaults.httpSignedLane),
    Config.withDescription("Answer signed order calls in node:http before Effect.")
  ),
  rateLimitKeyWeightPerMin: intIn("RATE_LIMIT_KEY_WEIGHT", defaults.rateLimitKeyWeightPerMin, 1, 1_000_000_000).pipe(
    Config.withDescription("Request weight per API key per minute.")
  ),
  rateLimitIpWeightPerMin: intIn("RATE_LIMIT_IP_WEIGHT", defaults.rateLimitIpWeightPerMin, 1, 1_000_000_000).pipe(
    Config.withDescription("Request weight per client IP per minute.")
  ),
  settlementFinalDepth: intIn("SETTLEMENT_FINAL_DEPTH", defaults.settlementFinalDepth, 1, 1_000).pipe(
    Config.withDescription("Confirmations at which a settlement leg is final.")
  ),
  sweepGraceMs: intIn("SWEEP_GRACE_MS", defaults.sweepGraceMs, 0, 3_600_000).pipe(
    Config.withDescription("How long after a grant's expiry its delegated key still opens for the sweep, ms.")
  )
})

/** The given settings over the defaults (tests, benchmarks). */
export const layer = (options?: Partial<ExchangeConfigShape>): Layer.Layer<ExchangeConfig> =>
  Layer.succeed(ExchangeConfig, { ...defaults, ...options })

/** The settings read from the current ConfigProvider (the process environment by default). */
export const layerFromEnv: Layer.Layer<ExchangeConfig, import("effect/ConfigError").ConfigError> = Layer.effect(ExchangeConfig, config)
