import { ConfigProvider, Effect, Either, Option } from "effect"
import { describe, expect, it } from "vitest"
import { nodeConfig } from "../../../src/config.ts"
import { unitDataDir } from "../../support/unitConfig.ts"

const read = (vars: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(nodeConfig, ConfigProvider.fromMap(new Map(Object.entries({ ...unitDataDir, ...vars }))))))

const refusal = (vars: Record<string, string>) => {
  const r = read(vars)
  if (Either.isRight(r)) throw new Error(`accepted ${JSON.stringify(vars)}`)
  return String(r.left)
}

describe("integer settings are bounded", () => {
  const cases: Array<[string, number, number]> = [
    ["SHARDLINE_SHARDS_PER_GROUP", 1, 10_000],
    ["SHARDLINE_MESSAGE_POLL_MS", 10, 60_000],
    ["SHARDLINE_SHARD_LOCK_REFRESH_MS", 100, 60_000],
    ["SHARDLINE_RUNNER_HEALTH_CHECK_MS", 100, 600_000],
    ["SHARDLINE_RATE_LIMIT_KEY_WEIGHT", 1, 1_000_000_000],
    ["SHARDLINE_RATE_LIMIT_IP_WEIGHT", 1, 1_000_000_000],
    ["SHARDLINE_DB_POOL_SIZE", 1, 1_000],
    ["SHARDLINE_REWARDS_SAMPLE_MS", 1_000, 86_400_000],
    ["SHARDLINE_DESK_TOKEN_PROPERTY", 1, 0x7fffffff]
  ]
  for (const [name, min, max] of cases) {
    it(`${name}: ${min} and ${max} pass, ${min - 1} and ${max + 1} are refused with the range`, () => {
      const extra: Record<string, string> = name === "SHARDLINE_SHARD_LOCK_REFRESH_MS" ? { SHARDLINE_SHARD_LOCK_EXPIRATION_MS: "600000" } : {}
      expect(Either.isRight(read({ [name]: String(min), ...extra }))).toBe(true)
      expect(Either.isRight(read({ [name]: String(max), ...extra }))).toBe(true)
      for (const bad of [min - 1, max + 1]) {
        const msg = refusal({ [name]: String(bad), ...extra })
        expect(msg).toContain(name)
        expect(msg).toContain(`must be an integer from ${min} to ${max}`)
      }
    })
  }

  it("takes public URLs without a trailing slash, refuses other schemes, credentials and queries", () => {
    const r = read({ SHARDLINE_DESK_PUBLIC_URL: "https://desk.example/", SHARDLINE_SOCIAL_PUBLIC_URL: "http://127.0.0.1:8280" })
    expect(Either.isRight(r) && [Option.getOrUndefined(r.right.deskPublicUrl), Option.getOrUndefined(r.right.socialPublicUrl)])
      .toEqual(["https://desk.example", "http://127.0.0.1:8280"])
    for (const bad of ["ftp://desk.example", "https://u:p@desk.example", "https://desk.example/?a=1", "not a url"]) {
      expect(refusal({ SHARDLINE_DESK_PUBLIC_URL: bad })).toContain("SHARDLINE_DESK_PUBLIC_URL")
    }
    expect(Either.isRight(r) && r.right.rewardsSampleMs).toBe(3_600_000)
    // Unset: rewards sample the desk's own dollar tokens; set: that one property (an override).
    expect(Either.isRight(r) && Option.isNone(r.right.deskTokenProperty)).toBe(true)
    const set = read({ SHARDLINE_DESK_TOKEN_PROPERTY: "3" })
    expect(Either.isRight(set) && Option.getOrUndefined(set.right.deskTokenProperty)).toBe(3)
  })

  it("refuses a lock expiry that is not longer than the lock refresh", () => {
    expect(refusal({ SHARDLINE_SHARD_LOCK_REFRESH_MS: "4000", SHARDLINE_SHARD_LOCK_EXPIRATION_MS: "4000" }))
      .toContain("SHARDLINE_SHARD_LOCK_EXPIRATION_MS must be greater than SHARDLINE_SHARD_LOCK_REFRESH_MS")
    expect(Either.isRight(read({ SHARDLINE_SHARD_LOCK_REFRESH_MS: "1000", SHARDLINE_SHARD_LOCK_EXPIRATION_MS: "1001" }))).toBe(true)
  })

  it("keeps the documented defaults", () => {
    const r = read({})
    expect(Either.isRight(r) && r.right).toMatchObject({
      shardsPerGroup: 300, entityMessagePollMs: 1000, shardLockRefreshMs: 1000, shardLockExpirationMs: 4000,
      runnerHealthCheckMs: 1000, rateLimitKeyWeightPerMin: 1200, rateLimitIpWeightPerMin: 1200, poolSize: 10
    })
  })
})

describe("ops are never open to a network", () => {
  it("refuses a non-loopback SHARDLINE_HTTP_HOST without SHARDLINE_OPS_TOKEN, accepts it with one", () => {
    for (const host of ["0.0.0.0", "10.1.2.3", "::", "example.internal"]) {
      expect(refusal({ SHARDLINE_HTTP_HOST: host })).toContain("set SHARDLINE_OPS_TOKEN")
      expect(Either.isRight(read({ SHARDLINE_HTTP_HOST: host, SHARDLINE_OPS_TOKEN: "t0ken" }))).toBe(true)
    }
  })

  it("accepts loopback binds without a token", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) {
      expect(Either.isRight(read({ SHARDLINE_HTTP_HOST: host }))).toBe(true)
    }
  })
})
