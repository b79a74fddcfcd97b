// What the migrator is handed: every service's migrations and the platform's, as one record of
// `<id>_<name>` to its effect (the shape of @effect/sql's Migrator.fromRecord). The platform
// knows no service: the composition (src/migrations.ts) gives it the list.
import type { SqlClient } from "@effect/sql"
import type { Effect } from "effect"

export type Migration = Effect.Effect<void, unknown, SqlClient.SqlClient>
export type Migrations = Readonly<Record<string, Migration>>

const KEY = /^(\d+)_(.+)$/

/**
 * One record from several, in id order. The migrator runs only ids above the highest one a database has
 * applied, so ids are one sequence across all services: two lists giving the same id, or a key
 * the migrator would silently skip (not `<digits>_<name>`), is a programming error that would
 * leave a table out of some database. It throws at startup, before anything is migrated.
 */
export const combineMigrations = (...lists: ReadonlyArray<Migrations>): Migrations => {
  const entries: Array<readonly [id: number, key: string, migration: Migration]> = []
  const ids = new Map<number, string>()
  for (const list of lists) {
    for (const [key, migration] of Object.entries(list)) {
      const match = KEY.exec(key)
      if (match === null) throw new Error(`migration "${key}" is not named <id>_<name>: the migrator would skip it`)
      const id = Number(match[1])
      const taken = ids.get(id)
      if (taken !== undefined) throw new Error(`migrations "${taken}" and "${key}" share id ${id}: ids are one sequence across all services`)
      ids.set(id, key)
      entries.push([id, key, migration])
    }
  }
  // In id order, as the migrator runs them (and as a reader of the list expects).
  return Object.fromEntries(entries.sort(([a], [b]) => a - b).map(([, key, migration]) => [key, migration]))
}
