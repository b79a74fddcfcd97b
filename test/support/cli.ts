// Runs the real CLI as a child process, as `npm run -s cli -- ...` does: `node bin/cli.mjs ...`,
// the bundle of src/cli/main.ts, rebuilt first when a source file is newer than it.
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export const cli = (args: ReadonlyArray<string>, env: Record<string, string>, timeoutMs = 90_000): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(process.execPath, [join(root, "bin", "cli.mjs"), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      timeout: timeoutMs
    }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0
      resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() })
    })
  })
