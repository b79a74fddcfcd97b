// Every migration of the system in one list: the platform's and each service's (its front door's
// `migrations`, from the list in src/services.ts), handed to the platform's migrator by a node,
// the CLI and the test harness alike. All of them must migrate with the same list: the migrator
// runs only ids above the highest one applied, so a process that knew fewer migrations could skip
// one for good.
import { combineMigrations } from "./platform/database/Migrations.ts"
import { migrations as platform } from "./platform/database/migrations/index.ts"
import { services } from "./services.ts"

export const migrations = combineMigrations(platform, ...services.map((s) => s.migrations))
