// Runs the real CLI (`npm run -s cli -- ...` is `tsx src/cli/main.ts ...`) as a child process.
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
    execFile(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      timeout: timeoutMs
    }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0
      resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() })
    })
  })
