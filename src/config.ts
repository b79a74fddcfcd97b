// Every setting of a node in one record: the platform's (AppConfig) and each service's own (its
// front door's `settings`, from the list in src/services.ts), read together so a node, the CLI
// and the test harness refuse a bad setting before anything starts. A service's fields are named
// for its variables (deskPublicUrl, socialGraceMs), so the parts never share a name and the record
// stays flat.
import { Config, ConfigProvider, Effect, Layer } from "effect"
import type { ConfigError } from "effect/ConfigError"
import { AppConfig, appConfig, type AppConfigShape } from "./platform/Config.ts"
import type { Settings } from "./platform/FrontDoor.ts"
import { services, type Services } from "./services.ts"

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never
type SettingsOf<S> = S extends { readonly settings: Settings<infer Id, infer Shape> } ? { id: Id; shape: Shape } : never
type ServiceSettings = SettingsOf<Services[number]>

export type NodeConfigShape = AppConfigShape & UnionToIntersection<ServiceSettings["shape"]>

/** The tags `configLayer` gives. */
export type NodeConfigs = AppConfig | ServiceSettings["id"]

export const nodeConfig: Config.Config<NodeConfigShape> = Config.all([appConfig, ...services.map((s) => s.settings.config as Config.Config<object>)]).pipe(
  Config.map((parts) => Object.assign({}, ...parts) as NodeConfigShape)
)

/** Reads the settings from the process environment, or from `vars` (tests). */
export const readNodeConfig = (vars?: Record<string, string>): Effect.Effect<NodeConfigShape, ConfigError> =>
  vars === undefined ? nodeConfig : Effect.withConfigProvider(nodeConfig, ConfigProvider.fromMap(new Map(Object.entries(vars))))

/** Each part under its own tag: what a node, a CLI command or a test gives the code it runs. */
export const configLayer = (config: NodeConfigShape): Layer.Layer<NodeConfigs> =>
  Layer.mergeAll(
    Layer.succeed(AppConfig, config),
    ...services.map((s) => Layer.succeed(s.settings.tag as Settings<unknown, unknown>["tag"], config))
  ) as Layer.Layer<NodeConfigs>
