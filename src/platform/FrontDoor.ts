// The shape of a service's front door (src/<service>/<Service>.ts exports its own as `frontDoor`,
// written `satisfies FrontDoor<…>` so its own types stay for the node to check):
// everything a node needs to run the service, its settings and its migrations. The node
// (cluster/Node.ts), the settings record (src/config.ts) and the migration list (src/migrations.ts)
// are all derived from one list of front doors (src/services.ts), so a fourth service is one entry
// there. The platform knows no service: this names only the shape, and the platform's own ports a
// service may fill.
import type { SqlClient } from "@effect/sql"
import type { Config, ConfigError, Context, Effect, Layer } from "effect"
import type { AppConfig } from "./Config.ts"
import type { Migrations } from "./database/Migrations.ts"
import type { DevnetBacking } from "./devnet/DevnetBacking.ts"
import type { DevnetChains } from "./devnet/DevnetChains.ts"
import type { RegisteredList } from "./ledger/LedgerRegistry.ts"
import type { InboundWebhooks } from "./ops/InboundWebhooks.ts"
import type { SecretBox } from "./SecretBox.ts"

/** A service's settings: its tag (what its code reads) and the described, bounded `Config` that fills it. */
export interface Settings<Id, Shape> {
  readonly tag: Context.Tag<Id, Shape>
  readonly config: Config.Config<Shape>
}

export interface FrontDoor<Id = unknown, Shape = unknown> {
  /** Its listener, entities and the services they share, over the platform. */
  readonly layer: Layer.Layer.Any
  /** The HTTP listener alone (a test can serve one service). */
  readonly listener: Layer.Layer.Any
  /** Its migrations (src/<service>/migrations/index.ts); ids are one sequence across all services. */
  readonly migrations: Migrations
  readonly settings: Settings<Id, Shape>
  /** Its assets issued when the ledger is a devnet, before any entity runs. */
  readonly devnetWorld?: Effect.Effect<void, ConfigError.ConfigError, AppConfig | SqlClient.SqlClient | SecretBox | DevnetChains>
  /** Its Omni properties, for the platform's LedgerRegistry. */
  readonly ledgerProperties?: RegisteredList
  /** What backs its tokens when a devnet pays them (the platform's DevnetBacking port). */
  readonly devnetBacking?: Layer.Layer<DevnetBacking, unknown, unknown>
  /** Its partner webhooks in the ops view (the platform's InboundWebhooks port). */
  readonly inboundWebhooks?: Layer.Layer<InboundWebhooks, never, SqlClient.SqlClient>
}
