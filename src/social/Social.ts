// The social network's front door: everything a node needs to run it, and all it may take from here.
// - `layer`: its listener, entities (Post, Continuity, link tokens), the stamping sweep, top-ups
//   and the content store, kept in the output so a node run inside a test can reach them.
// - `listener`: the HTTP listener alone; `migrations`: its tables; `SocialConfig`: its settings.
// - `frontDoor`: all of it as one record, social's entry in src/services.ts
//   (platform/FrontDoor.ts; it fills none of the platform's ports).
// It needs the platform (cluster, database, chains, secret box, sessions, config) beneath it.
import { Layer } from "effect"
import type { FrontDoor } from "../platform/FrontDoor.ts"
import * as TopUps from "./accounts/TopUps.ts"
import * as ContinuityEntity from "./accounts/ContinuityEntity.ts"
import * as ContentStoreLive from "./content/ContentStoreLive.ts"
import { listener } from "./http/SocialListener.ts"
import * as SocialLinkTokenEntity from "./identity/SocialLinkTokenEntity.ts"
import * as PostEntity from "./posts/PostEntity.ts"
import * as StampingSweep from "./posts/stampingSweep.ts"
import { config as socialConfig, SocialConfig, type SocialConfigShape } from "./SocialConfig.ts"
import { migrations } from "./migrations/index.ts"

export { listener, migrations, SocialConfig }

export const layer = Layer.mergeAll(
  listener, PostEntity.layer, ContinuityEntity.layer, SocialLinkTokenEntity.layer, StampingSweep.layer, TopUps.layer
).pipe(
  Layer.provideMerge(ContentStoreLive.layer)
)

export const frontDoor = { layer, listener, migrations, settings: { tag: SocialConfig, config: socialConfig } } satisfies FrontDoor<SocialConfig, SocialConfigShape>
