// The social network's front door: everything a node needs to run it, and all it may take from here.
// - `layer`: its listener, entities (Post, Continuity, link tokens), the stamping sweep, top-ups
//   and the content store, kept in the output so a node run inside a test can reach them.
// - `listener`: the HTTP listener alone; `migrations`: its tables; `SocialConfig`: its settings.
// - `frontDoor`: all of it as one record, social's entry in src/services.ts
//   (platform/FrontDoor.ts; it fills none of the platform's ports).
// It needs the platform (cluster, database, chains, secret box, sessions, config) beneath it.
import { Effect, Layer } from "effect"
import type { FrontDoor } from "../platform/FrontDoor.ts"
import { config as socialConfig, SocialConfig, type SocialConfigShape } from "./SocialConfig.ts"
import { migrations } from "./migrations/index.ts"

export { migrations, SocialConfig }

// Loaded when a node builds the layer, not when the CLI reads settings (socialLayer.ts).
const parts = Effect.promise(() => import("./socialLayer.ts"))
export const layer = Layer.unwrapEffect(Effect.map(parts, (m) => m.layer))
export const listener = Layer.unwrapEffect(Effect.map(parts, (m) => m.listener))

export const frontDoor = { layer, listener, migrations, settings: { tag: SocialConfig, config: socialConfig } } satisfies FrontDoor<SocialConfig, SocialConfigShape>
