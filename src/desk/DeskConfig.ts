// The token desk's own settings (shaped like @effect/cluster's ShardingConfig: a tag, defaults, a
// described Config and layers). Names and defaults are fixed by ../shared/INTERFACES.md; the
// README's table lists them. Each field is named for its variable (`deskPublicUrl` is
// SHARDLINE_DESK_PUBLIC_URL), so a node's settings are one flat record.
import { Config, Context, Layer, Option, type Redacted } from "effect"
import { boundedInt, intIn, optionalRedacted, publicUrl, settingName } from "../platform/settings.ts"

export interface DeskConfigShape {
  /** The desk listener's port. */
  readonly deskHttpPort: number
  /** Request weight per client IP per minute on the desk listener. */
  readonly deskIpWeightPerMin: number
  /** Desk transparency and registry reads (keyless, cached): their own per-IP fair-use ceiling, apart from deskIpWeightPerMin. */
  readonly deskPublicIpWeightPerMin: number
  /** Public base URL of the desk listener (wallet-link QR URLs, manifest `from`); unset: http://host:port. */
  readonly deskPublicUrl: Option.Option<string>
  /**
   * An override of what rewards sample: this one Omni property. None (the default): the desk's own
   * dollar tokens from its registry (SUSD, XUSD), per token and in total.
   */
  readonly deskTokenProperty: Option.Option<number>
  /** HMAC key of the desk's reserve attestations; unset: generated once, sealed with the master key in desk_secrets. */
  readonly attestationKey: Option.Option<Redacted.Redacted>
  /** The Attestor's cadence, ms: 3600000 (the spec's "at least hourly"); shorter only for tests and demos. */
  readonly attestationIntervalMs: number
  /** Desk callback URLs may be http:// (tests, local demos); https only otherwise. */
  readonly callbackAllowHttp: boolean
  /** Shared secrets of the desk's inbound partner webhooks; unset: that endpoint answers 503. */
  readonly webhookSecretPartnerA: Option.Option<Redacted.Redacted>
  readonly webhookSecretPartnerB: Option.Option<Redacted.Redacted>
  /** LinkedWallet balance sampling interval, ms (the spec's hourly; shorter only for tests and demos). */
  readonly rewardsSampleMs: number
}

export class DeskConfig extends Context.Tag("shardline/DeskConfig")<DeskConfig, DeskConfigShape>() {}

export const defaults: DeskConfigShape = {
  deskHttpPort: 8180,
  deskIpWeightPerMin: 6000,
  deskPublicIpWeightPerMin: 60_000,
  deskPublicUrl: Option.none(),
  deskTokenProperty: Option.none(),
  attestationKey: Option.none(),
  attestationIntervalMs: 3_600_000,
  callbackAllowHttp: false,
  webhookSecretPartnerA: Option.none(),
  webhookSecretPartnerB: Option.none(),
  rewardsSampleMs: 3_600_000
}

export const config: Config.Config<DeskConfigShape> = Config.all({
  deskHttpPort: Config.port(settingName("DESK_HTTP_PORT")).pipe(Config.withDefault(defaults.deskHttpPort), Config.withDescription("The desk listener's port.")),
  deskIpWeightPerMin: intIn("DESK_RATE_LIMIT_IP_WEIGHT", defaults.deskIpWeightPerMin, 1, 1_000_000_000).pipe(
    Config.withDescription("Request weight per client IP per minute on the desk listener.")
  ),
  deskPublicIpWeightPerMin: intIn("DESK_PUBLIC_IP_WEIGHT", defaults.deskPublicIpWeightPerMin, 1, 1_000_000_000).pipe(
    Config.withDescription("Per-IP fair-use ceiling of the desk's keyless transparency and registry reads.")
  ),
  deskPublicUrl: publicUrl("DESK_PUBLIC_URL").pipe(Config.withDescription("Public base URL of the desk listener; unset: http://host:port.")),
  deskTokenProperty: Config.option(boundedInt("DESK_TOKEN_PROPERTY", 1, 0x7fffffff)).pipe(
    Config.withDescription("The one Omni property rewards sample instead of the desk's own dollar tokens.")
  ),
  attestationKey: optionalRedacted("ATTESTATION_KEY").pipe(Config.withDescription("HMAC key of reserve attestations; unset: generated and sealed.")),
  attestationIntervalMs: intIn("ATTESTATION_INTERVAL_MS", defaults.attestationIntervalMs, 1_000, 3_600_000).pipe(
    Config.withDescription("The Attestor's cadence, ms.")
  ),
  callbackAllowHttp: Config.boolean(settingName("CALLBACK_ALLOW_HTTP")).pipe(
    Config.withDefault(defaults.callbackAllowHttp),
    Config.withDescription("Accept http:// callback URLs (tests, local demos).")
  ),
  webhookSecretPartnerA: optionalRedacted("WEBHOOK_SECRET_PARTNER_A").pipe(Config.withDescription("Shared secret of partner A's inbound webhooks.")),
  webhookSecretPartnerB: optionalRedacted("WEBHOOK_SECRET_PARTNER_B").pipe(Config.withDescription("Shared secret of partner B's inbound webhooks.")),
  rewardsSampleMs: intIn("REWARDS_SAMPLE_MS", defaults.rewardsSampleMs, 1_000, 86_400_000).pipe(
    Config.withDescription("LinkedWallet balance sampling interval, ms.")
  )
})

/** The given settings over the defaults (tests, benchmarks). */
export const layer = (options?: Partial<DeskConfigShape>): Layer.Layer<DeskConfig> => Layer.succeed(DeskConfig, { ...defaults, ...options })

/** The settings read from the current ConfigProvider (the process environment by default). */
export const layerFromEnv: Layer.Layer<DeskConfig, import("effect/ConfigError").ConfigError> = Layer.effect(DeskConfig, config)
