#!/usr/bin/env node
// Adds lock entries for optional platform packages that the registry reachable from this machine
// kind does not serve (it answers 404 for some darwin/win32/musl builds), so that `npm ci` finds
// package-lock.json in sync. Each entry carries only name, version and its os/cpu/libc guard, read
// off the package name; npm skips it on any other platform, and on that platform fetches it by
// version from a full registry. Run after `npm install` changes the lock:
//   node .ci/complete-lock.mjs
import { readFileSync, writeFileSync } from "node:fs"

const path = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(path, "utf8"))

const osOf = (name) => ["darwin", "win32", "linux", "android", "freebsd", "openbsd", "openharmony", "sunos", "netbsd", "aix"].find((os) => new RegExp(`-${os}(-|$)`).test(name))
const cpuOf = (name) => {
  const table = [["amd64", "x64"], ["x64", "x64"], ["arm64", "arm64"], ["ia32", "ia32"], ["loong64", "loong64"], ["ppc64", "ppc64"], ["riscv64", "riscv64"], ["s390x", "s390x"], ["arm", "arm"]]
  const hit = table.find(([token]) => new RegExp(`-${token}(-|$)`).test(name))
  return hit?.[1]
}
const libcOf = (name) => (/-musl(eabihf)?$/.test(name) ? "musl" : /-gnu(eabihf)?$/.test(name) ? "glibc" : undefined)

let added = 0
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = key === "" ? "node_modules" : `${key}/node_modules`
    const nested = `${base}/${dep}`
    const hoisted = `node_modules/${dep}`
    if (lock.packages[nested] || lock.packages[hoisted]) continue
    const os = osOf(dep)
    const cpu = cpuOf(dep)
    if (!os || !cpu) continue // not a platform build: leave it for npm to resolve
    if (!/^\d+\.\d+\.\d+/.test(version)) continue // only exact pins are safe to write by hand
    const libc = libcOf(dep)
    lock.packages[hoisted] = { version, cpu: [cpu], optional: true, os: [os], ...(libc ? { libc: [libc] } : {}) }
    added++
  }
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)))
lock.packages = sorted
writeFileSync(path, JSON.stringify(lock, null, 2) + "\n")
console.log(`added ${added} platform entries`)
