// SQL on a service's tables only inside that service (docs/layout.md, "One prefix rule"): every
// table a migration makes has one owner (its prefix, or the grandfathered list below, which
// docs/layout.md repeats), and no SQL text under src/ outside the owner's folder names it.
// dependency-cruiser sees imports, not SQL: this is the rule CI can see for tables.
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "../../..")
const services = ["exchange", "desk", "social"] as const
type Owner = typeof services[number] | "platform"

/** Tables made before the prefix rule: they keep their names and belong to this owner. */
const grandfathered: Record<string, Owner> = {
  users: "exchange", user_addresses: "exchange", api_keys: "exchange", authorizations: "exchange", authorization_keys: "exchange",
  authorization_events: "exchange", authorization_sweeps: "exchange", markets: "exchange", orders: "exchange", trades: "exchange",
  settlement_legs: "exchange", settlement_follows: "exchange", market_klines: "exchange", market_data_snapshots: "exchange",
  key_epoch_chain: "exchange", key_epoch_transfers: "exchange",
  linked_wallet_addresses: "desk", linked_wallet_samples: "desk",
  rate_limit_windows: "platform", ops_nodes: "platform", devnet_payments: "platform", secret_box_check: "platform", link_tokens: "platform",
  system_wallets: "platform", demo_wallets: "platform", fee_sponsor_txs: "platform"
}

const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })

const ownerOfTable = (table: string, madeBy: Owner): Owner | undefined => {
  const prefixed = services.find((s) => table.startsWith(`${s}_`))
  if (prefixed !== undefined) return prefixed
  if (table in grandfathered) return grandfathered[table]
  return madeBy === "platform" ? "platform" : undefined
}

const migrationDirs: ReadonlyArray<[Owner, string]> = [
  ["platform", "src/platform/database/migrations"],
  ...services.map((s): [Owner, string] => [s, `src/${s}/migrations`])
]

/** Every table a migration makes, with the migration folder that made it. */
const madeTables = migrationDirs.flatMap(([owner, dir]) =>
  files(join(root, dir)).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_0-9]+)/gi)]
      .map((m) => ({ table: m[1]!.toLowerCase(), madeBy: owner, file: relative(root, file) }))))

/**
 * The literal texts of a TypeScript file (strings and template literals, template expressions
 * blanked), comments left out: where SQL is written.
 */
export const literalsOf = (source: string): Array<string> => {
  const out: Array<string> = []
  let i = 0
  const n = source.length
  const template = (): string => {
    // at the opening backtick
    let text = ""
    i++
    while (i < n && source[i] !== "`") {
      if (source[i] === "\\") {
        text += source.slice(i, i + 2)
        i += 2
      } else if (source[i] === "$" && source[i + 1] === "{") {
        i += 2
        code("}")
        i++
        text += " ? "
      } else text += source[i++]
    }
    i++
    return text
  }
  const quoted = (q: string): string => {
    let text = ""
    i++
    while (i < n && source[i] !== q && source[i] !== "\n") {
      if (source[i] === "\\") {
        text += source.slice(i, i + 2)
        i += 2
      } else text += source[i++]
    }
    i++
    return text
  }
  /** Code until the closing `end` (a brace of a template expression) or the end of the file. */
  const code = (end: string | undefined) => {
    let depth = 0
    while (i < n) {
      const c = source[i]!
      if (c === "/" && source[i + 1] === "/") {
        while (i < n && source[i] !== "\n") i++
      } else if (c === "/" && source[i + 1] === "*") {
        const close = source.indexOf("*/", i + 2)
        i = close < 0 ? n : close + 2
      } else if (c === "`") out.push(template())
      else if (c === "'" || c === "\"") out.push(quoted(c))
      else if (c === "{") {
        depth++
        i++
      } else if (c === "}") {
        if (depth === 0 && end === "}") return
        depth--
        i++
      } else i++
    }
  }
  code(undefined)
  return out
}

const sqlWords = /\b(SELECT|INSERT|UPDATE|DELETE|FROM|JOIN|TRUNCATE|LOCK|REFERENCES|ALTER|CREATE|DROP)\b/i

/** Who may run SQL on an owner's tables: the folder of src/ a file sits in. */
const ownerOfFile = (path: string): string => {
  const [top, second] = relative(join(root, "src"), path).split("/")
  return top === "platform" || services.includes(top as typeof services[number]) ? top! : second === undefined ? "src" : top!
}

describe("table ownership", () => {
  const owners = new Map<string, Owner>()
  for (const { table, madeBy } of madeTables) {
    const owner = ownerOfTable(table, madeBy)
    if (owner !== undefined) owners.set(table, owner)
  }

  it("every table a migration makes has one owner: its service's prefix, or the grandfathered list", () => {
    const unowned = madeTables.filter(({ table, madeBy }) => ownerOfTable(table, madeBy) === undefined)
      .map(({ table, file }) => `${table} (${file}): name it <service>_…`)
    expect(unowned).toEqual([])
    expect(owners.size).toBeGreaterThan(60)
    // Shared by every service's listener (platform/http/NodeListeners.ts), read by the CLI.
    expect(owners.get("node_listeners")).toBe("platform")
  })

  it("docs/layout.md lists the grandfathered tables as this test does", () => {
    const doc = readFileSync(join(root, "docs/layout.md"), "utf8")
    for (const owner of ["exchange", "desk", "platform"] as const) {
      const row = doc.split("\n").find((l) => l.startsWith(`| ${owner} |`))
      const listed = [...(row ?? "").matchAll(/`([a-z_0-9]+)`/g)].map((m) => m[1]).sort()
      const here = Object.entries(grandfathered).filter(([, o]) => o === owner).map(([t]) => t).sort()
      expect(listed, owner).toEqual(here)
    }
  })

  it("no SQL under src/ outside a table's owner names it", () => {
    const names = [...owners.keys()]
    const found: Array<string> = []
    for (const file of files(join(root, "src"))) {
      if (/\/migrations\//.test(file)) continue
      const at = ownerOfFile(file)
      for (const text of literalsOf(readFileSync(file, "utf8"))) {
        if (!sqlWords.test(text)) continue
        for (const table of names) {
          const owner = owners.get(table)!
          if (owner === at || owner === "platform") continue
          if (!new RegExp(`\\b${table}\\b`).test(text)) continue
          found.push(`${relative(root, file)}: ${table} (${owner}'s): give the owner a function or a port for it`)
        }
      }
    }
    expect([...new Set(found)].sort()).toEqual([])
  })

  it("finds SQL in template literals and strings, not in comments", () => {
    const literals = literalsOf([
      "// SELECT * FROM hidden_in_comment",
      "/* FROM also_hidden */",
      "const a = sql`SELECT id FROM desk_orders WHERE id = ${id} AND n = ${`x${1}`}`",
      "const b = \"DELETE FROM orders\"",
      "const c = { d: `x` }"
    ].join("\n"))
    expect(literals.filter((t) => sqlWords.test(t))).toEqual(["SELECT id FROM desk_orders WHERE id =  ?  AND n =  ? ", "DELETE FROM orders"])
  })
})
