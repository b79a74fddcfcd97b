// vitest globalSetup: what npm cannot bring, set up once before any test file runs.
// - litecoind, chromium and promtool on PATH: installed with apt when we are root on a Debian-like machine
//   (a bounded wait for the dpkg lock).
// - Postgres answering at the test URL (SHARDLINE_TEST_DATABASE_URL or 127.0.0.1:5432): the
//   system cluster is started with pg_ctlcluster when it is installed, and the test database
//   is created when missing.
// - The user's own data dir (./.data, what `npm start` made) is out of bounds: every process a
//   test starts inherits SHARDLINE_FORBIDDEN_DATA_DIR, which makes a node or CLI refuse it, and the
//   teardown fails the run when anything under it changed (names, sizes, modification times).
// Anything it cannot do stops the run at once with the one command that would fix it, instead of
// every file waiting out its own timeout.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { ensureAptPackage, missing, onPath } from "../../harness/aptPackages.ts"
import { adminUrl } from "../../harness/db.ts"

export { ensureAptPackage, missing }

const POSTGRES_START_WAIT_MS = 30_000

export const ensureLitecoind = (): void => ensureAptPackage("litecoind", "litecoind")
/** Debian's chromium, which the browser tests drive with playwright-core (no browser download). */
export const ensureChromium = (): void => ensureAptPackage("chromium", "chromium")
/** promtool and prometheus (Debian's `prometheus` package): check deploy/prometheus and run it against a node. */
export const ensurePromtool = (): void => {
  ensureAptPackage("promtool", "prometheus")
  ensureAptPackage("prometheus", "prometheus")
}

const connects = async (url: string): Promise<boolean> => {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
  try {
    await c.connect()
    return true
  } catch {
    return false
  } finally {
    await c.end().catch(() => undefined)
  }
}

const isLocal = (url: URL) => ["127.0.0.1", "localhost", "::1", "[::1]"].includes(url.hostname)

const startSystemPostgres = (): boolean => {
  if (!onPath("pg_ctlcluster")) return false
  let versions: Array<string>
  try {
    versions = readdirSync("/etc/postgresql")
  } catch {
    return false
  }
  if (versions.length === 0) return false
  console.log(`globalSetup: starting the system PostgreSQL ${versions[0]} (pg_ctlcluster)`)
  return spawnSync("pg_ctlcluster", ["--skip-systemctl-redirect", versions[0]!, "main", "start"], { stdio: "inherit" }).status === 0
}

export const ensurePostgres = async (url = adminUrl): Promise<void> => {
  const target = new URL(url)
  const server = new URL(url)
  server.pathname = "/postgres"
  if (!(await connects(server.toString()))) {
    const fix = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
    if (!isLocal(server) || !startSystemPostgres()) {
      throw missing(`no Postgres answers at ${server.host}`, onPath("pg_ctlcluster") ? fix : "apt-get install -y postgresql && " + fix)
    }
    const deadline = Date.now() + POSTGRES_START_WAIT_MS
    while (!(await connects(server.toString()))) {
      if (Date.now() > deadline) throw missing(`Postgres started but does not answer at ${server.host}`, fix)
      await new Promise((r) => setTimeout(r, 250))
    }
  }
  const database = decodeURIComponent(target.pathname.slice(1))
  if (database !== "" && !(await connects(target.toString()))) {
    const c = new pg.Client({ connectionString: server.toString() })
    await c.connect()
    try {
      const found = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [database])
      if (found.rowCount === 0) await c.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`)
    } finally {
      await c.end()
    }
  }
}

/** The repository's ./.data: the data dir `npm start` uses by default. */
export const userDataDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", ".data")

/** Every entry under `dir` with its size and modification time ("absent" when there is none). */
export const dataDirState = (dir: string): Map<string, string> => {
  const state = new Map<string, string>()
  if (!existsSync(dir)) return state.set(".", "absent")
  const walk = (path: string, rel: string) => {
    const st = statSync(path, { throwIfNoEntry: false })
    if (st === undefined) return
    state.set(rel, `${st.isDirectory() ? "dir" : st.size} ${st.mtimeMs}`)
    if (!st.isDirectory()) return
    let names: Array<string> = []
    try {
      names = readdirSync(path)
    } catch {
      return // not ours to read (a postmaster's private dir)
    }
    for (const name of names) walk(join(path, name), rel === "." ? name : `${rel}/${name}`)
  }
  walk(dir, ".")
  return state
}

/** What changed between two states, at most `max` paths. */
export const changedPaths = (before: Map<string, string>, after: Map<string, string>, max = 5): Array<string> =>
  [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k)).slice(0, max)

export default async function setup(): Promise<() => void> {
  process.env["SHARDLINE_FORBIDDEN_DATA_DIR"] = userDataDir
  const before = dataDirState(userDataDir)
  ensureLitecoind()
  ensureChromium()
  ensurePromtool()
  await ensurePostgres()
  return () => {
    const changed = changedPaths(before, dataDirState(userDataDir))
    if (changed.length > 0) throw new Error(`a test touched the user's data dir ${userDataDir}: ${changed.join(", ")}`)
  }
}
