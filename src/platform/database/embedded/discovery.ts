// Who runs the embedded database of a data dir, so a second process (the CLI) can use it
// instead of starting another engine on the same files. PGlite takes no lock on its dataDir
// (two processes would both write), so the lock file is what keeps it single-writer.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { isAlive, processStartTime } from "./processes.ts"

export const DISCOVERY_FILE = "embedded-postgres.json"
export const LOCK_FILE = "embedded-postgres.lock"

export type EngineKind = "postgres" | "pglite"

export interface Discovery {
  readonly url: string
  readonly kind: EngineKind
  /** The process that started the engine and will stop it. */
  readonly pid: number
  /** That process's start time (Linux), so a reused pid is not mistaken for it. */
  readonly startTime?: string
  /** The postmaster or the PGlite child. */
  readonly serverPid: number
}

interface LockHolder {
  readonly pid: number
  readonly startTime?: string
}

const self = (): LockHolder => {
  const startTime = processStartTime(process.pid)
  return startTime === undefined ? { pid: process.pid } : { pid: process.pid, startTime }
}

const readJson = (path: string): unknown => {
  try {
    return JSON.parse(readFileSync(path, "utf8"))
  } catch {
    return undefined
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

export const readDiscovery = (dataDir: string): Discovery | undefined => {
  const d = readJson(join(dataDir, DISCOVERY_FILE))
  if (!isRecord(d) || typeof d.url !== "string" || typeof d.pid !== "number") return undefined
  if (d.kind !== "postgres" && d.kind !== "pglite") return undefined
  return {
    url: d.url,
    kind: d.kind,
    pid: d.pid,
    ...(typeof d.startTime === "string" ? { startTime: d.startTime } : {}),
    serverPid: typeof d.serverPid === "number" ? d.serverPid : -1
  }
}

export const writeDiscovery = (dataDir: string, d: Omit<Discovery, "pid" | "startTime">): void => {
  const path = join(dataDir, DISCOVERY_FILE)
  // Write then rename: a reader never sees half a file.
  // 0600: the URL carries the embedded server's password.
  writeFileSync(`${path}.${process.pid}.tmp`, JSON.stringify({ ...d, ...self() }, null, 2) + "\n", { mode: 0o600 })
  renameSync(`${path}.${process.pid}.tmp`, path)
}

/** Removes the discovery file if it is ours (a later owner may have replaced it). */
export const removeDiscovery = (dataDir: string): void => {
  const d = readDiscovery(dataDir)
  if (d === undefined || d.pid === process.pid) rmSync(join(dataDir, DISCOVERY_FILE), { force: true })
}

export const discoveryIsLive = (d: Discovery): boolean => isAlive(d.pid, d.startTime)

export type LockResult = { readonly _tag: "Acquired" } | { readonly _tag: "Held"; readonly pid: number }

/** Takes the data dir's engine lock; a lock whose holder is gone is taken over. */
export const acquireLock = (dataDir: string): LockResult => {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, LOCK_FILE)
  // Bounded: each round either creates the file or removes a stale one; a race adds a round.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(self()) + "\n", { flag: "wx", mode: 0o600 })
      return { _tag: "Acquired" }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    }
    const holder = readJson(path)
    if (isRecord(holder) && typeof holder.pid === "number") {
      const startTime = typeof holder.startTime === "string" ? holder.startTime : undefined
      if (isAlive(holder.pid, startTime)) return { _tag: "Held", pid: holder.pid }
    }
    rmSync(path, { force: true })
  }
  return { _tag: "Held", pid: -1 }
}

export const releaseLock = (dataDir: string): void => {
  const holder = readJson(join(dataDir, LOCK_FILE))
  if (isRecord(holder) && holder.pid === process.pid) rmSync(join(dataDir, LOCK_FILE), { force: true })
}
