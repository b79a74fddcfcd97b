// Every setting of a node in one record: the platform's (AppConfig) and each service's own,
// read together so a node, the CLI and the test harness refuse a bad setting before anything
// starts. Each part comes from its own module, not from a service's front door, so the CLI does
// not load every service's entities to read its settings (as src/migrations.ts does for migrations).
// A service's fields are named for its variables (deskPublicUrl, socialGraceMs), so the parts
// never share a name and the record stays flat.
import { Config, ConfigProvider, Effect, Layer } from "effect"
import * as DeskConfig from "./desk/DeskConfig.ts"
import * as ExchangeConfig from "./exchange/ExchangeConfig.ts"
import { AppConfig, appConfig, type AppConfigShape } from "./platform/Config.ts"
import * as SocialConfig from "./social/SocialConfig.ts"

export type NodeConfigShape = AppConfigShape & ExchangeConfig.ExchangeConfigShape & DeskConfig.DeskConfigShape & SocialConfig.SocialConfigShape

/** The tags `configLayer` gives. */
export type NodeConfigs = AppConfig | ExchangeConfig.ExchangeConfig | DeskConfig.DeskConfig | SocialConfig.SocialConfig

export const nodeConfig: Config.Config<NodeConfigShape> = Config.all([appConfig, ExchangeConfig.config, DeskConfig.config, SocialConfig.config]).pipe(
  Config.map(([app, exchange, desk, social]) => ({ ...app, ...exchange, ...desk, ...social }))
)

/** Reads the settings from the process environment, or from `vars` (tests). */
export const readNodeConfig = (vars?: Record<string, string>): Effect.Effect<NodeConfigShape, import("effect/ConfigError").ConfigError> =>
  vars === undefined ? nodeConfig : Effect.withConfigProvider(nodeConfig, ConfigProvider.fromMap(new Map(Object.entries(vars))))

/** Each part under its own tag: what a node, a CLI command or a test gives the code it runs. */
export const configLayer = (config: NodeConfigShape) =>
  Layer.mergeAll(
    Layer.succeed(AppConfig, config),
    Layer.succeed(ExchangeConfig.ExchangeConfig, config),
    Layer.succeed(DeskConfig.DeskConfig, config),
    Layer.succeed(SocialConfig.SocialConfig, config)
  )
