// Starts a throwaway anvil (npm @foundry-rs/anvil) for a test file and stops it afterwards.
// Each call gets its own port, so test files and chains can run side by side. The binary ships
// in the platform package; we resolve it rather than trusting PATH.
import { spawn, type ChildProcess } from "node:child_process"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { freePort } from "./ports.ts"

/** anvil's first default account: a public, well-known test key, prefunded with 10,000 ETH. */
export const anvilDevKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

const READY_TIMEOUT_MS = 15_000
const STOP_GRACE_MS = 3_000
const START_ATTEMPTS = 3

export interface Anvil {
  readonly url: string
  readonly chainId: number
  readonly pid: number
  readonly stop: () => Promise<void>
}

export const anvilBinary = (): string => {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve("@foundry-rs/anvil-linux-amd64/package.json")), "bin", "anvil")
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

const waitForRpc = async (url: string, child: ChildProcess): Promise<boolean> => {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline && !exited(child)) {
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })
      })
      if (res.ok) return true
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  return false
}

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise<void>((resolve) => {
    if (exited(child)) return resolve()
    const t = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS)
    child.once("exit", () => {
      clearTimeout(t)
      resolve()
    })
    child.kill("SIGTERM")
  })

export interface AnvilOptions {
  readonly chainId: number
  /** Mine only on `anvil_mine`/`evm_mine` (transactions stay pending until then). */
  readonly noMining?: boolean
  /** A file anvil loads its chain from at start and writes it to at stop (a demo cluster's chain kept across starts). */
  readonly state?: string
}

export const startAnvil = async (options: AnvilOptions): Promise<Anvil> => {
  for (let attempt = 1; ; attempt++) {
    // The port was free a moment ago; another process may take it first, so retry on a new one.
    const port = await freePort()
    const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(options.chainId), "--silent"]
    if (options.noMining === true) args.push("--no-mining")
    if (options.state !== undefined) args.push("--state", options.state)
    const child = spawn(anvilBinary(), args, { stdio: "ignore" })
    // A test process that dies without afterAll must not leave anvil behind.
    const killOnExit = () => child.kill("SIGKILL")
    process.once("exit", killOnExit)
    const url = `http://127.0.0.1:${port}`
    if (await waitForRpc(url, child)) {
      return {
        url,
        chainId: options.chainId,
        pid: child.pid ?? -1,
        stop: async () => {
          await stopChild(child)
          process.removeListener("exit", killOnExit)
        }
      }
    }
    await stopChild(child)
    process.removeListener("exit", killOnExit)
    if (attempt >= START_ATTEMPTS) throw new Error(`anvil (chain ${options.chainId}) did not answer RPC after ${attempt} attempts`)
  }
}
