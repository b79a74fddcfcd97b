// A node's config for tests and benchmarks: SHARDLINE_* variables given as a map, defaults otherwise.
import { ConfigProvider, Effect } from "effect"
import { appConfig, type AppConfigShape } from "../src/platform/Config.ts"

/** The master key every test and bench node shares, so keys made by one open on another. */
export const testMasterKey = "11".repeat(32)

export const configFrom = (vars: Record<string, string>): AppConfigShape =>
  Effect.runSync(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(vars)))))
