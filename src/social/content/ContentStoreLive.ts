// The content store the settings choose: SHARDLINE_SOCIAL_CONTENT_STORE=postgres (default; every
// node of a cluster shares it) or filesystem (under SHARDLINE_DATA_DIR/content; one node only).
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { AppConfig } from "../../platform/Config.ts"
import type { ContentStore } from "./ContentStore.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { layerFs } from "./FsBlobs.ts"
import { layerPg } from "./PgBlobs.ts"

export const layer: Layer.Layer<ContentStore, never, AppConfig | SocialConfig | SqlClient.SqlClient> = Layer.unwrapEffect(
  Effect.map(SocialConfig, (config): Layer.Layer<ContentStore, never, AppConfig | SocialConfig | SqlClient.SqlClient> => config.socialContentStore === "filesystem" ? layerFs : layerPg)
)
