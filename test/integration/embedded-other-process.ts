// Another process on the same data dir, as the CLI or a crashed app would be: it calls
// connectOrStartEmbedded, prints what it got, then exits or holds until killed.
import { type ChildProcess, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import type { EngineChoice } from "../../src/platform/database/embedded/EmbeddedPostgres.ts"

export interface OtherProcess {
  readonly url: string
  readonly attached: boolean
  readonly serverPid: number
  readonly child: ChildProcess
}

export const exitOf = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once("exit", () => r()))

/** scriptDir must be writable and outside dataDir; children are pushed to `spawned` for cleanup. */
export const otherProcess = (options: {
  readonly dataDir: string
  readonly scriptDir: string
  readonly engine: EngineChoice
  readonly mode: "hold" | "exit"
  readonly spawned: Array<ChildProcess>
}): Promise<OtherProcess> => {
  const script = join(options.scriptDir, "embedded-other-process.mts")
  const module = pathToFileURL(join(import.meta.dirname, "../../src/platform/database/embedded/EmbeddedPostgres.ts")).href
  writeFileSync(
    script,
    `import { connectOrStartEmbedded } from ${JSON.stringify(module)}
const [dataDir, engine, mode] = process.argv.slice(2)
const db = await connectOrStartEmbedded({ dataDir, engine })
console.log(JSON.stringify({ url: db.url, attached: db.attached, serverPid: db.serverPid }))
if (mode === "hold") setInterval(() => {}, 1000)
else await db.stop()
`
  )
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href
  const child = spawn(process.execPath, ["--import", tsx, script, options.dataDir, options.engine, options.mode], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  options.spawned.push(child)
  return new Promise((resolve, reject) => {
    let out = ""
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString()
      const line = out.split("\n")[0]
      if (out.includes("\n") && line) resolve({ ...(JSON.parse(line) as Omit<OtherProcess, "child">), child })
    })
    child.once("exit", (code) => reject(new Error(`other process exited with ${code}: ${out}`)))
  })
}
