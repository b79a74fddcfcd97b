// `npm run cli` runs bin/cli.mjs: the CLI bundled once by esbuild and run by plain node. The
// bundle must never be stale: touching a source file it was built from makes the next run
// rebuild, and the command still answers correctly from the new build.
import { execFile } from "node:child_process"
import { readdirSync, readFileSync, utimesSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const current = () => readFileSync(join(root, "dist", "cli", "current"), "utf8").trim()

const cli = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, [join(root, "bin", "cli.mjs"), ...args], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr })))

describe("the CLI bundle", () => {
  it("answers from a bundle, and rebuilds it when a source file is newer", async () => {
    const usage = await cli([])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toMatch(/^usage: cli <keys\|authorizations\|ops\|address\|message\|devnet\|desk\|social\|markets\|demo> \.\.\./)
    const first = current()
    expect(await cli([])).toMatchObject({ code: 2 })
    expect(current()).toBe(first) // nothing changed: no rebuild
    const meta = JSON.parse(readFileSync(join(root, "dist", "cli", first, "meta.json"), "utf8")) as { sources: Array<string> }
    expect(meta.sources).toContain("src/cli/main.ts")
    expect(meta.sources).toContain("src/cli/keys.ts")
    const now = new Date()
    utimesSync(join(root, "src", "cli", "args.ts"), now, now)
    const after = await cli([])
    expect(after.code).toBe(2)
    expect(current()).not.toBe(first)
  }, 120_000)

  it("is built once when CLIs start side by side on a stale bundle (the others wait and run that build)", async () => {
    const now = new Date()
    utimesSync(join(root, "src", "cli", "args.ts"), now, now)
    const runs = await Promise.all([cli([]), cli([]), cli([]), cli([])])
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2])
    const builtSince = readdirSync(join(root, "dist", "cli")).filter((d) => /^\d+-\d+$/.test(d) && Number(d.split("-")[0]) >= now.getTime())
    expect(builtSince).toHaveLength(1)
    expect(current()).toBe(builtSince[0])
  }, 120_000)
})
