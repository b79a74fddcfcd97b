// A command the machine's package manager brings (litecoind, chromium, promtool): on PATH, or
// installed with apt when we are root on a Debian-like machine (a bounded wait for the dpkg lock).
// Shared by the vitest global setup, the chaos campaign and `npm run cluster`'s shared chains.
import { execFileSync, spawnSync } from "node:child_process"

const APT_TIMEOUT_MS = 600_000

export const onPath = (command: string): boolean => spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0
export const isRoot = (): boolean => process.getuid?.() === 0

const run = (command: string, args: ReadonlyArray<string>): void => {
  execFileSync(command, args, {
    stdio: ["ignore", "ignore", "inherit"],
    timeout: APT_TIMEOUT_MS,
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  })
}

/** The message that stops the run: what is missing and the one command that provides it. */
export const missing = (what: string, fix: string): Error => new Error(`${what}; run: ${fix}`)

/** Seconds apt-get waits for another apt/dpkg run to release its lock (engineers share machines). */
const DPKG_LOCK_WAIT_SEC = 240

/** `command` on PATH, installed with apt (package `pkg`) when we are root on a Debian-like machine. */
export const ensureAptPackage = (command: string, pkg: string): void => {
  if (onPath(command)) return
  const fix = `apt-get update && apt-get install -y ${pkg}`
  if (!isRoot() || !onPath("apt-get")) throw missing(`${command} is not on PATH`, `sudo sh -c '${fix}'`)
  console.log(`installing ${pkg} with apt-get`)
  const install = ["-o", `DPkg::Lock::Timeout=${DPKG_LOCK_WAIT_SEC}`, "install", "-y", "-qq", "--no-install-recommends", pkg]
  try {
    run("apt-get", install)
  } catch {
    // A fresh machine may have no package lists yet.
    run("apt-get", ["-o", `DPkg::Lock::Timeout=${DPKG_LOCK_WAIT_SEC}`, "update", "-qq"])
    run("apt-get", install)
  }
  if (!onPath(command)) throw missing(`apt-get did not install ${pkg}`, fix)
}
