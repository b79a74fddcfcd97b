// Runs the real CLI as a child process, as `npm run -s cli -- ...` does: `node bin/cli.mjs ...`,
// the bundle of src/cli/main.ts, rebuilt first when a source file is newer than it.
import { execFile } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** A data dir of this test process's own for a CLI run that names none: never the user's ./.data. */
let scratchDataDir: string | undefined
const ownDataDir = () => (scratchDataDir ??= mkdtempSync(join(tmpdir(), "sl-cli-")))

export const cli = (args: ReadonlyArray<string>, env: Record<string, string>, timeoutMs = 90_000): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(process.execPath, [join(root, "bin", "cli.mjs"), ...args], {
      cwd: root,
      env: { ...process.env, SHARDLINE_DATA_DIR: process.env["SHARDLINE_DATA_DIR"] ?? ownDataDir(), ...env },
      timeout: timeoutMs
    }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0
      resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() })
    })
  })

/** The one JSON object a successful --json command prints (empty stderr, exit 0). */
export const cliJson = <A = Record<string, unknown>>(r: CliResult): A => {
  expect(r.stderr.trim(), r.stderr).toBe("")
  expect(r.code).toBe(0)
  const lines = r.stdout.trim().split("\n")
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]!) as A
}

/** A refusal: non-zero exit, nothing on stdout, one line on stderr; that line. */
export const cliRefused = (r: CliResult): string => {
  expect(r.code).not.toBe(0)
  expect(r.stdout).toBe("")
  const lines = r.stderr.trim().split("\n")
  expect(lines, r.stderr).toHaveLength(1)
  return lines[0]!
}
