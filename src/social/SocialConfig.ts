// The social network's own settings (shaped like @effect/cluster's ShardingConfig: a tag,
// defaults, a described Config and layers). Names and defaults are fixed by
// ../shared/INTERFACES.md; the README's table lists them. Each field is named for its variable
// (`socialGraceMs` is SHARDLINE_SOCIAL_GRACE_MS), so a node's settings are one flat record.
import { Config, Context, Layer, Option } from "effect"
import { intIn, publicUrl, settingName } from "../platform/settings.ts"

const hourMs = 3_600_000
const dayMs = 24 * hourMs

export interface SocialConfigShape {
  /** The social listener's port. */
  readonly socialHttpPort: number
  /** Request weight per client IP per minute on the social listener. */
  readonly socialIpWeightPerMin: number
  /** Public base URL of the social listener (sign-in QR, callback URLs, wallet-link); unset: http://host:port. */
  readonly socialPublicUrl: Option.Option<string>
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
  /** A block explorer's transaction page, `{txid}` standing for the txid: post pages link each proof's transaction there; none: shown unlinked. */
  readonly socialExplorerTxUrl: Option.Option<string>
}

export class SocialConfig extends Context.Tag("shardline/SocialConfig")<SocialConfig, SocialConfigShape>() {}

export const defaults: SocialConfigShape = {
  socialHttpPort: 8280,
  socialIpWeightPerMin: 6000,
  socialPublicUrl: Option.none(),
  socialContentStore: "postgres",
  socialContentBytesMax: 50 * 1024 * 1024,
  socialChunkCacheBytes: 64 * 1024 * 1024,
  socialPostPriceBase: 10_000n,
  socialStarterBalanceBase: 100_000_000n,
  socialHostingPeriodMs: 30 * dayMs,
  socialGraceMs: 7 * dayMs,
  socialContinuityCountdownMs: 7 * dayMs,
  socialStampRetryMs: 5_000,
  socialStampRetryMaxMs: 300_000,
  socialStampSweepMs: 300_000,
  socialSignatureWindowMs: dayMs,
  socialExplorerTxUrl: Option.none()
}

/** `https://explorer.example/tx/{txid}`: an http(s) URL once the txid is in, and without credentials. */
export const isExplorerTemplate = (template: string): boolean => {
  if (!template.includes("{txid}")) return false
  const filled = template.replace("{txid}", "0")
  if (!URL.canParse(filled)) return false
  const url = new URL(filled)
  return ["http:", "https:"].includes(url.protocol) && url.username === "" && url.password === ""
}

/** Base units read as an integer within bounds, held as a bigint (money is never a float). */
const baseUnits = (name: string, fallback: bigint, max: number) => intIn(name, Number(fallback), 0, max).pipe(Config.map(BigInt))

export const config: Config.Config<SocialConfigShape> = Config.all({
  socialHttpPort: Config.port(settingName("SOCIAL_HTTP_PORT")).pipe(Config.withDefault(defaults.socialHttpPort), Config.withDescription("The social listener's port.")),
  socialIpWeightPerMin: intIn("SOCIAL_RATE_LIMIT_IP_WEIGHT", defaults.socialIpWeightPerMin, 1, 1_000_000_000).pipe(
    Config.withDescription("Request weight per client IP per minute on the social listener.")
  ),
  socialPublicUrl: publicUrl("SOCIAL_PUBLIC_URL").pipe(Config.withDescription("Public base URL of the social listener; unset: http://host:port.")),
  socialContentStore: Config.literal("postgres", "filesystem")(settingName("SOCIAL_CONTENT_STORE")).pipe(
    Config.withDefault(defaults.socialContentStore),
    Config.withDescription("Where content bytes are kept: postgres or filesystem (under the data dir).")
  ),
  socialContentBytesMax: intIn("SOCIAL_CONTENT_BYTES_MAX", defaults.socialContentBytesMax, 1, 2 * 1024 * 1024 * 1024).pipe(
    Config.withDescription("Largest content item, bytes.")
  ),
  socialChunkCacheBytes: intIn("SOCIAL_CHUNK_CACHE_BYTES", defaults.socialChunkCacheBytes, 0, 16 * 1024 * 1024 * 1024).pipe(
    Config.withDescription("Verified content chunks kept in memory per node, bytes; 0 turns the cache off.")
  ),
  socialPostPriceBase: baseUnits("SOCIAL_POST_PRICE", defaults.socialPostPriceBase, 100_000_000_000).pipe(
    Config.withDescription("What one writing action costs from the member's balance, base units.")
  ),
  socialStarterBalanceBase: baseUnits("SOCIAL_STARTER_BALANCE", defaults.socialStarterBalanceBase, 100_000_000_000).pipe(
    Config.withDescription("Balance a devnet account starts with, base units.")
  ),
  socialHostingPeriodMs: intIn("SOCIAL_HOSTING_PERIOD_MS", defaults.socialHostingPeriodMs, 1_000, 3650 * dayMs).pipe(
    Config.withDescription("A post's paid hosting period, ms.")
  ),
  socialGraceMs: intIn("SOCIAL_GRACE_MS", defaults.socialGraceMs, 0, 365 * dayMs).pipe(
    Config.withDescription("How long unpaid content is still served before it is unpinned, ms.")
  ),
  socialContinuityCountdownMs: intIn("SOCIAL_CONTINUITY_COUNTDOWN_MS", defaults.socialContinuityCountdownMs, 1_000, 365 * dayMs).pipe(
    Config.withDescription("Account continuity: the recovery countdown, ms.")
  ),
  socialStampRetryMs: intIn("SOCIAL_STAMP_RETRY_MS", defaults.socialStampRetryMs, 100, hourMs).pipe(
    Config.withDescription("First retry of a post's stamps that could not all go out, ms (doubling).")
  ),
  socialStampRetryMaxMs: intIn("SOCIAL_STAMP_RETRY_MAX_MS", defaults.socialStampRetryMaxMs, 100, dayMs).pipe(
    Config.withDescription("The longest wait between two stamp retries, ms.")
  ),
  socialStampSweepMs: intIn("SOCIAL_STAMP_SWEEP_MS", defaults.socialStampSweepMs, 200, dayMs).pipe(
    Config.withDescription("How often a node looks for pending posts whose stamp timer was lost, ms.")
  ),
  socialSignatureWindowMs: intIn("SOCIAL_SIGNATURE_WINDOW_MS", defaults.socialSignatureWindowMs, 1_000, 30 * dayMs).pipe(
    Config.withDescription("How long a member-signed action waits for the member's signatures, ms.")
  ),
  socialExplorerTxUrl: Config.option(Config.string(settingName("SOCIAL_EXPLORER_TX_URL")).pipe(
    Config.validate({ message: "must be an http(s) URL with {txid} where the transaction id goes", validation: isExplorerTemplate })
  )).pipe(Config.withDescription("A block explorer's transaction page with {txid}, e.g. https://explorer.example/tx/{txid}; post pages link proofs there."))
})

/** The given settings over the defaults (tests, benchmarks). */
export const layer = (options?: Partial<SocialConfigShape>): Layer.Layer<SocialConfig> => Layer.succeed(SocialConfig, { ...defaults, ...options })

/** The settings read from the current ConfigProvider (the process environment by default). */
export const layerFromEnv: Layer.Layer<SocialConfig, import("effect/ConfigError").ConfigError> = Layer.effect(SocialConfig, config)
