#!/usr/bin/env node
// `npm run cli`: the CLI (src/cli/main.ts) run by plain node from one esbuild bundle, so a
// command answers in well under a second instead of paying for tsx and for loading every
// module of every package it touches (effect's barrels alone cost ~0.4 s).
//
// The bundle is built on first use and again whenever one of our source files it was built from
// (or package-lock.json) is newer than it: editing src/ and running the CLI never runs stale code.
// Builds land in dist/cli/<build id>/ and dist/cli/current names the live one, switched with an
// atomic rename, so CLIs started side by side never see a half-written build.
//
// Our modules see their own source location as import.meta.url (a bundle would otherwise point
// them at dist/), so files they find next to themselves are found as when run from source.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const distDir = join(root, "dist", "cli")
const currentFile = join(distDir, "current")
const entry = join(root, "src", "cli", "main.ts")
/** Builds other than the current one are removed once this old (a CLI may still be loading from one). */
const OLD_BUILD_MAX_AGE_MS = 60 * 60 * 1000
/** Packages that locate files (wasm, workers) next to their own modules, or are optional: not bundled. */
const external = ["pg-native", "@electric-sql/pglite", "tiny-secp256k1"]

const readCurrent = () => {
  try {
    const id = readFileSync(currentFile, "utf8").trim()
    const dir = join(distDir, id)
    return { dir, meta: JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) }
  } catch {
    return undefined
  }
}

const mtime = (path) => {
  try {
    return statSync(path).mtimeMs
  } catch {
    return Infinity // removed or renamed: rebuild
  }
}

const isStale = (current) => {
  if (current === undefined) return true
  const builtAt = current.meta.builtAtMs
  if (mtime(join(root, "package-lock.json")) > builtAt) return true
  // This file decides how the bundle is built: a change here is a change of every build.
  if (mtime(fileURLToPath(import.meta.url)) > builtAt) return true
  return current.meta.sources.some((file) => mtime(join(root, file)) > builtAt)
}

/** import.meta.url of our own modules → their source file's URL. */
const sourceLocation = {
  name: "source-location",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${join("node_modules", "")}`)) return undefined
      const text = readFileSync(args.path, "utf8")
      if (!text.includes("import.meta.url")) return undefined
      return { contents: text.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)), loader: "ts" }
    })
  }
}

const build = async () => {
  const { build: esbuild } = await import("esbuild")
  const builtAtMs = Date.now()
  const id = `${builtAtMs}-${process.pid}`
  const dir = join(distDir, id)
  const result = await esbuild({
    absWorkingDir: root,
    entryPoints: [entry],
    outdir: dir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outExtension: { ".js": ".mjs" },
    external,
    metafile: true,
    logLevel: "warning",
    plugins: [sourceLocation],
    // Bundled CommonJS packages call require() and read __filename and __dirname (the `bindings`
    // package that secp256k1 tries first does, inside an Error.prepareStackTrace it installs: left
    // undefined, every later error's stack threw a ReferenceError). Each chunk gets its own.
    banner: {
      js: [
        `import { createRequire as __shardlineRequire } from "node:module";`,
        `import { fileURLToPath as __shardlinePath } from "node:url";`,
        `const require = __shardlineRequire(import.meta.url);`,
        `const __shardlineFilename = __shardlinePath(import.meta.url);`,
        `const __shardlineDirname = __shardlinePath(new URL(".", import.meta.url));`
      ].join(" ")
    },
    // Only the free (CommonJS) uses: a module's own `const __filename` is left alone.
    define: { __filename: "__shardlineFilename", __dirname: "__shardlineDirname" }
  })
  const sources = Object.keys(result.metafile.inputs).filter((p) => !p.split(/[\\/]/).includes("node_modules"))
  writeFileSync(join(dir, "meta.json"), JSON.stringify({ builtAtMs, sources }))
  const tmp = `${currentFile}.${process.pid}`
  writeFileSync(tmp, id)
  renameSync(tmp, currentFile)
  for (const other of readdirSync(distDir)) {
    const path = join(distDir, other)
    if (other === id || other === "current" || other === "build.lock" || !statSync(path).isDirectory()) continue
    if (Date.now() - mtime(path) > OLD_BUILD_MAX_AGE_MS) rmSync(path, { recursive: true, force: true })
  }
  return { dir }
}

/** A build that outlives this is taken for a crashed builder's and its lock is broken. */
const BUILD_LOCK_STALE_MS = 5 * 60 * 1000
const lockDir = join(distDir, "build.lock")

/**
 * Runs `f` holding the build lock (a directory: mkdir is atomic). CLIs started side by side on a
 * stale bundle used to build it each and rename in turn, so `current` moved under a CLI that had
 * just been built (a suite run in a fresh clone saw it); now one builds and the others wait for it.
 */
const underBuildLock = async (f) => {
  for (;;) {
    try {
      mkdirSync(lockDir)
      break
    } catch (e) {
      if (e.code !== "EEXIST") throw e
      if (Date.now() - mtime(lockDir) > BUILD_LOCK_STALE_MS) rmSync(lockDir, { recursive: true, force: true })
      else await new Promise((r) => setTimeout(r, 100))
    }
  }
  try {
    return await f()
  } finally {
    rmSync(lockDir, { recursive: true, force: true })
  }
}

/** Builds if needed; returns the directory of the build to run. */
const ensureBuilt = async () => {
  const current = readCurrent()
  if (!isStale(current)) return current.dir
  mkdirSync(distDir, { recursive: true })
  return underBuildLock(async () => {
    // Another CLI may have built while this one waited for the lock.
    const now = readCurrent()
    return isStale(now) ? (await build()).dir : now.dir
  })
}

const dir = await ensureBuilt()
// `node bin/cli.mjs --build-only`: build now (the Dockerfile does, as its user cannot write later).
if (process.argv[2] === "--build-only") process.exit(existsSync(join(dir, "main.mjs")) ? 0 : 1)
await import(pathToFileURL(join(dir, "main.mjs")).href)
