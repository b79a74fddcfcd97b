// The V8 flags of cluster/nodeFlags.ts are the ones every way of starting a node passes: npm start,
// npm run cluster and the Dockerfile (literal text, so read here), and this Node accepts them.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { nodeFlags } from "../../../cluster/nodeFlags.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts

describe("node flags", () => {
  it("npm start and npm run cluster pass every flag to node, before tsx", () => {
    for (const name of ["start", "cluster"]) {
      const words = scripts[name]!.split(/\s+/)
      expect(words[0]).toBe("node")
      const tsxAt = words.indexOf("--import")
      expect(tsxAt).toBeGreaterThan(0)
      for (const flag of nodeFlags) expect(words.slice(1, tsxAt)).toContain(flag)
    }
  })

  it("the Dockerfile's command passes every flag to node", () => {
    const cmd = readFileSync(join(root, "Dockerfile"), "utf8").split("\n").find((l) => l.startsWith("CMD "))!
    const words = JSON.parse(cmd.slice(4)) as Array<string>
    expect(words[0]).toBe("node")
    for (const flag of nodeFlags) expect(words.slice(1, words.indexOf("--import"))).toContain(flag)
  })

  it("this Node accepts them (a flag it does not know makes it exit with 'bad option')", () => {
    expect(execFileSync(process.execPath, [...nodeFlags, "-e", "process.stdout.write('ok')"], { encoding: "utf8" })).toBe("ok")
    expect(() => execFileSync(process.execPath, ["--max-semi-space-sise=64", "-e", "0"], { stdio: "ignore" })).toThrow()
  })
})
