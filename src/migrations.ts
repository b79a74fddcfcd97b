// Every migration of the system in one list: the platform's and each service's, handed to the
// platform's migrator by a node, the CLI and the test harness alike. All of them must migrate
// with the same list: the migrator runs only ids above the highest one applied, so a process that
// knew fewer migrations could skip one for good. Each service's list comes from its own
// migrations folder (its front door re-exports it), not from the front door itself, so the CLI
// does not load every service's entities to migrate.
import { migrations as desk } from "./desk/migrations/index.ts"
import { migrations as exchange } from "./exchange/migrations/index.ts"
import { combineMigrations } from "./platform/database/Migrations.ts"
import { migrations as platform } from "./platform/database/migrations/index.ts"
import { migrations as social } from "./social/migrations/index.ts"

export const migrations = combineMigrations(platform, exchange, desk, social)
