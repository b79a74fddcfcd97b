// Small process helpers for the embedded engines: run a command (optionally as another user),
// tell whether a recorded pid is still the same live process, pick a free port, read a log tail.
import { spawn } from "node:child_process"
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs"
import { createServer } from "node:net"

export interface RunAs {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

export interface RunResult {
  readonly code: number | null
  readonly output: string
}

/** Captured output kept per command; pg_ctl and initdb print a few KB at most. */
const OUTPUT_BYTES_MAX = 64 * 1024

/** Runs a command to completion. detached: its own process group, so Ctrl-C in the app's terminal
 * does not reach a postmaster it starts (the app stops it in its own finalizer). */
export const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly runAs?: RunAs; readonly cwd?: string; readonly timeoutMs: number; readonly input?: string }
): Promise<RunResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true,
      ...(options.runAs ? { uid: options.runAs.uid, gid: options.runAs.gid } : {}),
      // LC_ALL=C: initdb and the server's messages stay parseable whatever the machine's locale.
      env: { ...process.env, LC_ALL: "C", LANG: "C" }
    })
    let output = ""
    const collect = (b: Buffer) => {
      if (output.length < OUTPUT_BYTES_MAX) output += b.toString("utf8")
    }
    if (options.input !== undefined) child.stdin!.end(options.input)
    child.stdout!.on("data", collect)
    child.stderr!.on("data", collect)
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs)
    child.once("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    // "exit", not "close": a daemon it spawned could keep inherited pipes open.
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

/** Fields 3.. of /proc/<pid>/stat (Linux); undefined elsewhere or when the pid is gone. */
const procStat = (pid: number): Array<string> | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) may contain spaces and parentheses; fields after it are plain.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

/** Process start time (clock ticks since boot), to tell a live pid from a reused one. */
export const processStartTime = (pid: number): string | undefined => procStat(pid)?.[19] // field 22: starttime

export const isAlive = (pid: number, startTime?: string): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  const stat = procStat(pid)
  // An exited child nobody reaped yet (containers often lack an init that reaps) still has a pid.
  if (stat?.[0] === "Z" || stat?.[0] === "X") return false
  if (startTime === undefined || stat === undefined) return true
  return stat[19] === startTime
}

export const processCommand = (pid: number): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")
  } catch {
    return undefined
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      s.close(() => resolve(port))
    })
  })

/** The end of a log file, for error messages. */
export const logTail = (file: string, bytes = 4096): string => {
  try {
    const size = statSync(file).size
    const fd = openSync(file, "r")
    try {
      const length = Math.min(size, bytes)
      const buf = Buffer.alloc(length)
      readSync(fd, buf, 0, length, size - length)
      return buf.toString("utf8")
    } finally {
      closeSync(fd)
    }
  } catch {
    return "(no log)"
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
