// The PGlite engine, parent side: spawns pgliteChild.ts under plain node with tsx's loader and
// waits for it to listen. Works the same whether the app runs under tsx (npm start) or vitest,
// because the loader is resolved to a file URL here instead of being looked up from the cwd.
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, openSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { ChildConfig, ChildReport } from "./pgliteChild.ts"
import { logTail } from "./processes.ts"

export interface PgliteServerOptions {
  /** PGlite's own data directory (created on first start). */
  readonly pgliteDir: string
  /** The 0600 password file the child asks every connection to prove (password.ts). */
  readonly passwordFile: string
  readonly port: number
  readonly logFile: string
  /** A new dataDir takes about 5 s here (initdb in wasm); reopening about 0.5 s. */
  readonly startTimeoutMs?: number
  readonly stopTimeoutMs?: number
}

export interface PgliteServer {
  readonly port: number
  readonly pid: number
  /** Time PGlite took to open its dataDir, as measured in the child. */
  readonly openMs: number
  readonly stop: () => Promise<void>
}

const START_TIMEOUT_MS = 120_000
const STOP_TIMEOUT_MS = 30_000

const childEntry = fileURLToPath(new URL("./pgliteChild.ts", import.meta.url))
const tsxLoader = (): string => pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

const withTimeout = <A>(p: Promise<A>, ms: number): Promise<A | "timeout"> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

const waitReady = (child: ChildProcess, logFile: string, timeoutMs: number) =>
  new Promise<{ port: number; openMs: number }>((resolve, reject) => {
    const fail = (why: string) => {
      cleanup()
      child.kill("SIGKILL")
      reject(new Error(`PGlite child ${why}; last log lines:\n${logTail(logFile)}`))
    }
    const onMessage = (m: ChildReport) => {
      if (m.type === "ready") {
        cleanup()
        resolve({ port: m.port, openMs: m.openMs })
      } else fail(`failed: ${m.message}`)
    }
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited (code ${code}, signal ${signal})`)
    const timer = setTimeout(() => fail(`did not start within ${timeoutMs} ms`), timeoutMs)
    const cleanup = () => {
      clearTimeout(timer)
      child.off("message", onMessage)
      child.off("exit", onExit)
    }
    child.on("message", onMessage)
    child.once("exit", onExit)
  })

export const startPgliteServer = async (options: PgliteServerOptions): Promise<PgliteServer> => {
  const config: ChildConfig = { dataDir: options.pgliteDir, host: "127.0.0.1", port: options.port, passwordFile: options.passwordFile }
  const log = openSync(options.logFile, "a")
  let child: ChildProcess
  try {
    child = spawn(process.execPath, ["--import", tsxLoader(), childEntry, JSON.stringify(config)], {
      stdio: ["ignore", log, log, "ipc"],
      // Own process group: Ctrl-C reaches the app, which stops the child after its own finalizers.
      detached: true
    })
  } finally {
    closeSync(log)
  }
  const { port, openMs } = await waitReady(child, options.logFile, options.startTimeoutMs ?? START_TIMEOUT_MS)
  let stopping: Promise<void> | undefined
  child.once("exit", (code, signal) => {
    // The app's queries will fail with connection refused; say why, once, where it is seen.
    if (stopping === undefined) console.error(`[embedded] PGlite child exited (code ${code}, signal ${signal}); see ${options.logFile}`)
  })
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      if (child.connected) child.send({ type: "stop" })
      if ((await withTimeout(exited(child), options.stopTimeoutMs ?? STOP_TIMEOUT_MS)) === "timeout") {
        child.kill("SIGKILL")
        await exited(child)
      }
    })()
    return stopping
  }
  return { port, pid: child.pid ?? -1, openMs, stop }
}
