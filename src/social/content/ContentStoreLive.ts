// The content store the settings choose: SHARDLINE_SOCIAL_CONTENT_STORE=postgres (default; every
// node of a cluster shares it) or filesystem (under SHARDLINE_DATA_DIR/content; one node only).
import { Effect, Layer } from "effect"
import { AppConfig } from "../../platform/Config.ts"
import { layerFs } from "./FsBlobs.ts"
import { layerPg } from "./PgBlobs.ts"

export const layer = Layer.unwrapEffect(Effect.map(AppConfig, (config) => (config.socialContentStore === "filesystem" ? layerFs : layerPg)))
