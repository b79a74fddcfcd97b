// The HTTP edge's own settings: which proxies are trusted for X-Forwarded-For, how long a client
// may take to send its headers and its body, and how many connections one IP may hold open. They
// bound what a slow or spoofing client can hold; README's settings table documents each.
import { Config, ConfigError, Either } from "effect"
import { loopbackProxies, parseTrustedProxies, type ProxyRange } from "./clientIp.ts"

export interface EdgeSettings {
  /** Undefined: no proxy is trusted and the client is the socket's address (SHARDLINE_TRUST_PROXY off). */
  readonly trustedProxies: ReadonlyArray<ProxyRange> | undefined
  /** From a connection's first byte of a request to the end of its headers, ms; then 408. */
  readonly headersTimeoutMs: number
  /** After the headers, how long the whole body may take to arrive, ms; then 408. */
  readonly bodyTimeoutMs: number
  /** Open connections one client IP may hold on one listener; the next is answered 429 and closed. */
  readonly connectionsPerIpMax: number
}

export const edgeSettingsDefaults = { headersTimeoutMs: 10_000, bodyTimeoutMs: 60_000, connectionsPerIpMax: 128 } as const

const intIn = (name: string, fallback: number, min: number, max: number) =>
  Config.integer(`SHARDLINE_${name}`).pipe(
    Config.validate({ message: `must be an integer from ${min} to ${max}`, validation: (n) => n >= min && n <= max }),
    Config.withDefault(fallback)
  )

export const edgeSettingsConfig: Config.Config<EdgeSettings> = Config.all({
  trustProxy: Config.boolean("SHARDLINE_TRUST_PROXY").pipe(Config.withDefault(false)),
  proxies: Config.string("SHARDLINE_TRUSTED_PROXIES").pipe(Config.withDefault(loopbackProxies)),
  headersTimeoutMs: intIn("HTTP_HEADERS_TIMEOUT_MS", edgeSettingsDefaults.headersTimeoutMs, 1_000, 600_000),
  bodyTimeoutMs: intIn("HTTP_BODY_TIMEOUT_MS", edgeSettingsDefaults.bodyTimeoutMs, 1_000, 3_600_000),
  connectionsPerIpMax: intIn("HTTP_CONNECTIONS_PER_IP", edgeSettingsDefaults.connectionsPerIpMax, 1, 1_000_000)
}).pipe(Config.mapOrFail(({ trustProxy, proxies, ...rest }): Either.Either<EdgeSettings, ConfigError.ConfigError> => {
  const parsed = parseTrustedProxies(proxies)
  if (typeof parsed === "string") return Either.left(ConfigError.InvalidData(["SHARDLINE_TRUSTED_PROXIES"], parsed))
  return Either.right({ ...rest, trustedProxies: trustProxy ? parsed : undefined })
}))
