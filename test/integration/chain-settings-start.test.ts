// `npm start`'s entry point refuses bad chain settings with one clear line and exit code 1: no
// stack trace, no secret repeated, and (for a refused setup) nothing started first.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

const start = (vars: Record<string, string>): Promise<{ code: number; output: string }> =>
  new Promise((resolve) => {
    const { SHARDLINE_DATABASE_URL: _unset, ...base } = process.env
    execFile(process.execPath, ["--import", "tsx", join(root, "cluster", "main.ts")], {
      cwd: root,
      env: { ...base, ...vars },
      timeout: 60_000
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, output: `${stdout}${stderr}` }))
  })

describe("npm start with bad chain settings", () => {
  it("refuses a malformed value and a refused setup, each in one line without a stack trace", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sl-badchain-"))
    const [list, socket] = await Promise.all([
      start({ SHARDLINE_DATA_DIR: dataDir, SHARDLINE_EVM_RPC_URLS: "base=http://127.0.0.1:8545/key-s3cret,solana=http://127.0.0.1:8899" }),
      start({ SHARDLINE_DATA_DIR: dataDir, SHARDLINE_TOPOLOGY: "socket" })
    ])
    expect(list.code).toBe(1)
    expect(list.output).toContain(`Invalid data at SHARDLINE_EVM_RPC_URLS: "unknown chain "solana" in entry 2 (chains: ethereum, base, bsc)"`)
    expect(list.output).not.toContain("s3cret")
    expect(socket.code).toBe(1)
    expect(socket.output).toContain("Invalid data at SHARDLINE_TOPOLOGY: \"a socket-topology node would run its own in-process devnet")
    for (const { output } of [list, socket]) expect(output).not.toMatch(/^\s+at /m)
    // Refused before the embedded Postgres, the master key or the devnet key was created.
    expect(readdirSync(dataDir)).toEqual([])
  })

  it("prints a setting out of range as exactly one line, `config: …`, and exits 1", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sl-badpoll-"))
    const result = await start({ SHARDLINE_DATA_DIR: dataDir, SHARDLINE_MESSAGE_POLL_MS: "0" })
    expect(result).toEqual({ code: 1, output: `config: Invalid data at SHARDLINE_MESSAGE_POLL_MS: "must be an integer from 10 to 60000"\n` })
  })
})
