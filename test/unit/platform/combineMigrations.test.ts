// Issue 21: every service hands the platform's migrator its own list; the lists are combined
// into one record, and a combination the migrator would run wrongly is refused at startup.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { migrations } from "../../../src/migrations.ts"
import { migrations as desk } from "../../../src/desk/migrations/index.ts"
import { migrations as exchange } from "../../../src/exchange/migrations/index.ts"
import { migrations as platform } from "../../../src/platform/database/migrations/index.ts"
import { migrations as social } from "../../../src/social/migrations/index.ts"
import { combineMigrations } from "../../../src/platform/database/Migrations.ts"

const step = Effect.void

describe("combineMigrations", () => {
  it("merges the lists into one, in id order", () => {
    expect(Object.keys(combineMigrations({ "0001_a": step, "0010_d": step }, { "0003_c": step, "0002_b": step }))).toEqual(["0001_a", "0002_b", "0003_c", "0010_d"])
  })

  it("refuses two services giving the same id (ids are one sequence across services)", () => {
    expect(() => combineMigrations({ "0025_desk_x": step }, { "0025_social_y": step })).toThrow(/share id 25/)
  })

  it("refuses a key the migrator would skip", () => {
    expect(() => combineMigrations({ "desk_x": step })).toThrow(/not named <id>_<name>/)
  })

  it("the system's list is the platform's and the three services', in id order", () => {
    const keys = Object.keys(migrations)
    expect(keys).toHaveLength(Object.keys(platform).length + Object.keys(exchange).length + Object.keys(desk).length + Object.keys(social).length)
    expect(keys).toEqual([...keys].sort())
    // The 22 of the last release keep their place, before anything added since.
    expect(keys.slice(0, 22).at(-1)).toBe("0024_social_owed_stamps")
  })
})
