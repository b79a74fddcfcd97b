// Runs one Shardline node as a real child process (`node --import tsx cluster/main.ts`), the way
// `npm start` does, so a test can kill -9 it or SIGTERM it and watch what the others do.
import { execFile, spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort, freePortRange } from "./ports.ts"
import { nodeFlags } from "../cluster/nodeFlags.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/**
 * How long a node may take from spawn to answering /ping (tsx compiles on the first start). 45 s
 * was too short on a loaded box: in a CI-like run at load 7–9 a failover node logged its runner
 * listening 13 s after spawn and its listeners had not answered 32 s later.
 */
export const nodeStartTimeoutMs = 90_000
/** Output kept per node; older output is dropped (a node's log during a test is far smaller). */
const outputLimitChars = 4_000_000

export interface NodeExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly at: number
}

export interface NodeProcess {
  /** The node's name in logs, ops and Postgres' application_name (its first process's, with SHARDLINE_PROCESSES > 1). */
  readonly name: string
  /** Each runner process's name (one, unless SHARDLINE_PROCESSES > 1: then runner port + index each). */
  readonly runnerNames: ReadonlyArray<string>
  /** The pid of the process that runs runner `name` now, from the primary's "is up" lines (SHARDLINE_PROCESSES > 1). */
  readonly runnerPid: (name: string) => number | undefined
  readonly pid: number
  readonly baseUrl: string
  readonly deskUrl: string
  readonly socialUrl: string
  readonly child: ChildProcess
  /** Everything the node wrote to stdout and stderr so far. */
  readonly output: () => string
  readonly exited: Promise<NodeExit>
  readonly isRunning: () => boolean
  /** Kills it with SIGKILL if still running, and removes its data dir. */
  readonly dispose: () => Promise<void>
}

export interface SpawnOptions {
  /** The entry script instead of cluster/main.ts (a bench's own wrapper around the node layer). */
  readonly script?: string
  /** Node flags before `--import tsx` (e.g. --cpu-prof). */
  readonly execArgv?: ReadonlyArray<string>
  /** Open an IPC channel to the child (child.send / process.on("message")). */
  readonly ipc?: boolean
  /** How long the node may take to answer /ping (a loaded machine starts nodes slowly). */
  readonly startTimeoutMs?: number
}

/** Port variables a test may fix; any it leaves out, spawnNode picks. */
const portVars = ["SHARDLINE_HTTP_PORT", "SHARDLINE_DESK_HTTP_PORT", "SHARDLINE_SOCIAL_HTTP_PORT", "SHARDLINE_RUNNER_PORT"]

/** Thrown when the node could not bind a port spawnNode picked (see spawnNode's retry). */
class PortTaken extends Error {}

/**
 * Starts a node and waits until all its listeners answer. The ports it picks were free when
 * picked, but another vitest worker may pick and bind the same one before the node binds it (CI
 * saw a social listener refuse its port once in 187 files): when every port is ours to pick and
 * the node exits with EADDRINUSE during start, it starts again on fresh ports, up to 3 times.
 */
export const spawnNode = async (vars: Record<string, string>, options: SpawnOptions = {}): Promise<NodeProcess> => {
  const ours = portVars.every((k) => vars[k] === undefined)
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(vars, options)
    } catch (e) {
      if (!(e instanceof PortTaken) || !ours || attempt >= 3) throw e
      console.warn(`spawnNode: a picked port was taken before the node bound it; starting again on fresh ports (attempt ${attempt + 1})`)
    }
  }
}

const spawnOnce = async (vars: Record<string, string>, options: SpawnOptions): Promise<NodeProcess> => {
  const startTimeoutMs = options.startTimeoutMs ?? nodeStartTimeoutMs
  const httpPort = await freePort()
  const processes = Number(vars["SHARDLINE_PROCESSES"] ?? 1)
  const runnerPort = processes > 1 ? await freePortRange(processes) : await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), "sl-proc-"))
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    SHARDLINE_TOPOLOGY: "socket",
    SHARDLINE_HTTP_HOST: "127.0.0.1",
    SHARDLINE_HTTP_PORT: String(httpPort),
    SHARDLINE_DESK_HTTP_PORT: String(await freePort()),
    SHARDLINE_SOCIAL_HTTP_PORT: String(await freePort()),
    SHARDLINE_RUNNER_HOST: "127.0.0.1",
    SHARDLINE_RUNNER_PORT: String(runnerPort),
    SHARDLINE_DATA_DIR: dataDir,
    // Each node's chains are its own in-process devnets unless a test points them at shared nodes.
    SHARDLINE_DEVNET_PER_NODE: "true",
    ...vars
  }
  const child = spawn(process.execPath, [...nodeFlags, ...(options.execArgv ?? []), "--import", "tsx", options.script ?? join(root, "cluster", "main.ts")], {
    cwd: root,
    env,
    stdio: options.ipc === true ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"]
  })
  let out = ""
  const append = (chunk: Buffer) => {
    out += chunk.toString()
    if (out.length > outputLimitChars) out = out.slice(out.length - outputLimitChars)
  }
  child.stdout!.on("data", append)
  child.stderr!.on("data", append)
  const exited = new Promise<NodeExit>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })))
  const isRunning = () => child.exitCode === null && child.signalCode === null
  const dispose = async () => {
    if (isRunning()) child.kill("SIGKILL")
    await exited
    rmSync(dataDir, { recursive: true, force: true })
  }
  /** Each service has its own listener and they come up independently: started = all three answer. */
  const answers = async (url: string) => {
    try {
      return (await fetch(url)).status
    } catch {
      return 0 // not listening yet
    }
  }
  const allListening = async () => {
    const [exchange, desk, social] = await Promise.all([
      answers(`http://127.0.0.1:${httpPort}/api/public/v1/ping`),
      answers(`http://127.0.0.1:${env["SHARDLINE_DESK_HTTP_PORT"]}/`),
      answers(`http://127.0.0.1:${env["SHARDLINE_SOCIAL_HTTP_PORT"]}/`)
    ])
    return exchange === 200 && desk > 0 && social > 0
  }
  const runnerNames = Array.from({ length: processes }, (_, i) => `shardline:127.0.0.1:${Number(env["SHARDLINE_RUNNER_PORT"]) + i}`)
  const runnerPid = (name: string) => {
    const port = name.split(":").at(-1)
    const ups = [...out.matchAll(new RegExp(`\\(runner 127\\.0\\.0\\.1:${port}\\) is up, pid (\\d+)`, "g"))]
    return ups.length === 0 ? undefined : Number(ups.at(-1)![1])
  }
  /** With processes > 1 the node is started once every process is up, not only the first to listen. */
  const allUp = () => processes === 1 || runnerNames.every((n) => runnerPid(n) !== undefined)
  const node: NodeProcess = {
    name: runnerNames[0]!,
    runnerNames,
    runnerPid,
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${httpPort}`,
    deskUrl: `http://127.0.0.1:${env["SHARDLINE_DESK_HTTP_PORT"]}`,
    socialUrl: `http://127.0.0.1:${env["SHARDLINE_SOCIAL_HTTP_PORT"]}`,
    child,
    output: () => out,
    exited,
    isRunning,
    dispose
  }
  const deadline = Date.now() + startTimeoutMs
  for (;;) {
    if (!isRunning()) {
      await dispose()
      const message = `${node.name} exited during start:\n${out}`
      throw out.includes("address is already in use") || out.includes("EADDRINUSE") ? new PortTaken(message) : new Error(message)
    }
    if (allUp() && await allListening()) return node
    if (Date.now() > deadline) {
      await dispose()
      throw new Error(`${node.name} did not answer /ping within ${startTimeoutMs} ms:\n${out}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
}

/**
 * `npm start` as a child process that is expected to stop by itself (a refusal at start), without
 * the runner's own SHARDLINE_* variables and on free ports: its exit code and everything it wrote.
 */
export const runNodeToExit = async (vars: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number; output: string }> => {
  // The suite's guard of the user's ./.data stays (SHARDLINE_FORBIDDEN_DATA_DIR), and the node
  // gets a data dir of its own unless the test gives one.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SHARDLINE_") || k === "SHARDLINE_FORBIDDEN_DATA_DIR"))
  const ports = {
    SHARDLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "sl-exit-")),
    SHARDLINE_HTTP_PORT: String(await freePort()),
    SHARDLINE_DESK_HTTP_PORT: String(await freePort()),
    SHARDLINE_SOCIAL_HTTP_PORT: String(await freePort()),
    SHARDLINE_RUNNER_PORT: String(await freePort())
  }
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeFlags, "--import", "tsx", join(root, "cluster", "main.ts")], {
      cwd: root,
      env: { ...base, ...ports, ...vars },
      timeout: timeoutMs
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, output: `${stdout}${stderr}` }))
  })
}
