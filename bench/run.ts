// `npm run bench -- <name> [...]` runs bench/<name>.ts; with no name it runs them all.
import { readdirSync } from "node:fs"
import { dirname } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const available = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && f !== "report.ts")
  .map((f) => f.replace(/\.ts$/, ""))
const asked = process.argv.slice(2).filter((a) => !a.startsWith("-"))
const names = asked.length > 0 ? asked : available
for (const name of names) {
  if (!available.includes(name)) {
    console.error(`unknown benchmark "${name}"; available: ${available.join(", ")}`)
    process.exit(2)
  }
  const mod = (await import(pathToFileURL(`${here}/${name}.ts`).href)) as { run: () => Promise<void> }
  await mod.run()
}
process.exit(0)
