// The social network's running parts, composed: its listener, entities, the stamping sweep,
// top-ups and the content store. Loaded by the front door (Social.ts) only when a node builds it,
// so the CLI, which reads the front door's settings and migrations, does not load every entity and
// handler.
import { Layer } from "effect"
import * as TopUps from "./accounts/TopUps.ts"
import * as ContinuityEntity from "./accounts/ContinuityEntity.ts"
import * as ContentStoreLive from "./content/ContentStoreLive.ts"
import { listener } from "./http/SocialListener.ts"
import * as SocialLinkTokenEntity from "./identity/SocialLinkTokenEntity.ts"
import * as PostEntity from "./posts/PostEntity.ts"
import * as StampingSweep from "./posts/stampingSweep.ts"

export { listener }

export const layer = Layer.mergeAll(
  listener, PostEntity.layer, ContinuityEntity.layer, SocialLinkTokenEntity.layer, StampingSweep.layer, TopUps.layer
).pipe(
  Layer.provideMerge(ContentStoreLive.layer)
)

