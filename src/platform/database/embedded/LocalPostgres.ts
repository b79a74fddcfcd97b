// The local-postgres engine: the machine's own PostgreSQL binaries, a cluster under
// <dataDir>/pg, listening on 127.0.0.1 with its unix socket under <dataDir>/pg-run.
// initdb and postgres refuse to run as root, so a root process runs them as the `postgres`
// system user (or `nobody`) and hands that user the directories.
// Private to its owner: password (SCRAM) authentication on every connection, the password random
// and kept 0600 in the data dir, the data dir 0700 (0710 to the server user's group when that is
// another user), the socket directory 0700. See docs/embedded-postgres.md, "Privacy".
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { appendFileSync } from "node:fs"
import { dirname, join } from "node:path"
import pg from "pg"
import { readOrMakePassword } from "./password.ts"
import { freePort, isAlive, logTail, processCommand, run, type RunAs } from "./processes.ts"

export { PASSWORD_FILE } from "./password.ts"

export const DATABASE_NAME = "shardline"

const INITDB_TIMEOUT_MS = 120_000
const PG_CTL_TIMEOUT_S = 60
/** The unix socket path (dir + "/.s.PGSQL.<port>") must fit sun_path (108 bytes). */
const SOCKET_DIR_BYTES_MAX = 90
const CONF_FILE = "shardline.conf"
const HBA_FILE = "shardline_hba.conf"
/** Password auth for everyone, on the socket and on loopback; nothing else is accepted. */
const HBA = ["local all all scram-sha-256", "host all all 127.0.0.1/32 scram-sha-256", ""].join("\n")

export interface PostgresBinaries {
  readonly dir: string
  readonly postgres: string
  readonly initdb: string
  readonly pgCtl: string
}

const binariesIn = (dir: string): PostgresBinaries | undefined => {
  const b = { dir, postgres: join(dir, "postgres"), initdb: join(dir, "initdb"), pgCtl: join(dir, "pg_ctl") }
  return existsSync(b.postgres) && existsSync(b.initdb) && existsSync(b.pgCtl) ? b : undefined
}

/** postgres, initdb and pg_ctl side by side: on PATH, else the newest /usr/lib/postgresql/<v>/bin. */
export const findPostgresBinaries = (): PostgresBinaries | undefined => {
  for (const dir of (process.env.PATH ?? "").split(":").filter((d) => d !== "")) {
    const found = binariesIn(dir)
    if (found) return found
  }
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
  for (const v of versions) {
    const found = binariesIn(join(root, v, "bin"))
    if (found) return found
  }
  return undefined
}

const lookupUser = (name: string): RunAs | undefined => {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [user, , uid, gid] = line.split(":")
      if (user === name && uid !== undefined && gid !== undefined) return { name, uid: Number(uid), gid: Number(gid) }
    }
  } catch {
    // no /etc/passwd: not a system where we could switch users anyway
  }
  return undefined
}

/** Who runs initdb/postgres: ourselves, unless we are root. */
export const serverUser = (): RunAs | undefined => {
  if (process.getuid?.() !== 0) return undefined
  const user = lookupUser("postgres") ?? lookupUser("nobody")
  if (user === undefined) throw new Error("running as root and neither a `postgres` nor a `nobody` user exists to run PostgreSQL")
  return user
}

const canTraverse = (path: string, user: RunAs): boolean => {
  const s = statSync(path)
  if (s.uid === user.uid) return (s.mode & 0o100) !== 0
  if (s.gid === user.gid) return (s.mode & 0o010) !== 0
  return (s.mode & 0o001) !== 0
}

/** The data dir is ours alone: 0700, or 0710 with the server user's group when that user is
 * another one (it must traverse it to reach <dataDir>/pg). Its parents must let that user in. */
const makePrivate = (dataDir: string, user: RunAs | undefined): void => {
  if (user === undefined || statSync(dataDir).uid === user.uid) return chmodSync(dataDir, 0o700)
  chownSync(dataDir, statSync(dataDir).uid, user.gid)
  chmodSync(dataDir, 0o710)
}

const ensureReachable = (dataDir: string, user: RunAs): void => {
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    if (!canTraverse(dir, user)) {
      throw new Error(`user ${user.name} cannot enter ${dir}, so PostgreSQL cannot reach ${dataDir}; choose a SHARDLINE_DATA_DIR it can reach`)
    }
    if (dir === dirname(dir)) return
  }
}

const ownedBy = (path: string, user: RunAs | undefined, mode: number): void => {
  mkdirSync(path, { recursive: true })
  if (user) chownSync(path, user.uid, user.gid)
  chmodSync(path, mode)
}

const quoteConf = (s: string): string => `'${s.replaceAll("'", "''")}'`

interface Layout {
  readonly pgData: string
  readonly runDir: string
  readonly logFile: string
}

const layout = (dataDir: string): Layout => ({
  pgData: join(dataDir, "pg"),
  runDir: join(dataDir, "pg-run"),
  logFile: join(dataDir, "pg-run", "postgres.log")
})

/** A file only the server user can read, for initdb's --pwfile; removed right after. */
const withPwFile = async <A>(l: Layout, user: RunAs | undefined, password: string, f: (file: string) => Promise<A>): Promise<A> => {
  const file = join(l.runDir, `pwfile.${process.pid}`)
  writeFileSync(file, password + "\n", { mode: 0o600 })
  if (user) chownSync(file, user.uid, user.gid)
  try {
    return await f(file)
  } finally {
    rmSync(file, { force: true })
  }
}

const initdb = async (bin: PostgresBinaries, l: Layout, user: RunAs | undefined, password: string): Promise<void> => {
  // A half-made cluster (crash during initdb) has files but no PG_VERSION; initdb needs it empty.
  for (const entry of readdirSync(l.pgData)) rmSync(join(l.pgData, entry), { recursive: true, force: true })
  const r = await withPwFile(l, user, password, (pwfile) => run(
    bin.initdb,
    ["-D", l.pgData, "-U", "postgres", "-A", "scram-sha-256", `--pwfile=${pwfile}`, "-E", "UTF8", "--locale=C", "--no-instructions"],
    { ...(user ? { runAs: user } : {}), cwd: l.runDir, timeoutMs: INITDB_TIMEOUT_MS }
  ))
  if (r.code !== 0) throw new Error(`initdb failed (code ${r.code}):\n${r.output}`)
  appendFileSync(join(l.pgData, "postgresql.conf"), `\n# per-start settings written by Shardline\ninclude_if_exists = '${CONF_FILE}'\n`)
}

/** postmaster.pid: line 1 pid, line 4 port. */
const readPostmasterPid = (pgData: string): { readonly pid: number; readonly port: number } | undefined => {
  try {
    const lines = readFileSync(join(pgData, "postmaster.pid"), "utf8").split("\n")
    return { pid: Number(lines[0]), port: Number(lines[3]) }
  } catch {
    return undefined
  }
}

const pgCtl = (bin: PostgresBinaries, l: Layout, user: RunAs | undefined, args: ReadonlyArray<string>) =>
  run(bin.pgCtl, ["-D", l.pgData, ...args], {
    ...(user ? { runAs: user } : {}),
    cwd: l.runDir,
    timeoutMs: (PG_CTL_TIMEOUT_S + 10) * 1000
  })

const stopServer = async (bin: PostgresBinaries, l: Layout, user: RunAs | undefined): Promise<void> => {
  const r = await pgCtl(bin, l, user, ["-m", "fast", "-w", "-t", String(PG_CTL_TIMEOUT_S), "stop"])
  if (r.code === 0) return
  // pg_ctl gave up: interrupt the postmaster ourselves (SIGINT = fast shutdown), then wait for it to go.
  const running = readPostmasterPid(l.pgData)
  if (running && isAlive(running.pid)) {
    process.kill(running.pid, "SIGINT")
    for (let i = 0; i < 100 && isAlive(running.pid); i++) await new Promise((r) => setTimeout(r, 100))
    if (isAlive(running.pid)) process.kill(running.pid, "SIGKILL")
  }
}

/** A postmaster left running (the app was killed) is stopped; a stale postmaster.pid removed. */
const clearLeftovers = async (bin: PostgresBinaries, l: Layout, user: RunAs | undefined): Promise<void> => {
  const previous = readPostmasterPid(l.pgData)
  if (previous === undefined) return
  if (isAlive(previous.pid) && (processCommand(previous.pid) ?? "").includes("postgres")) {
    await stopServer(bin, l, user)
  }
  if (existsSync(join(l.pgData, "postmaster.pid")) && !isAlive(previous.pid)) rmSync(join(l.pgData, "postmaster.pid"))
  for (const entry of readdirSync(l.runDir)) {
    if (entry.startsWith(".s.PGSQL.")) rmSync(join(l.runDir, entry), { force: true })
  }
}

/** A cluster made before passwords (trust) gets one, in single-user mode while the server is down. */
const setPassword = async (bin: PostgresBinaries, l: Layout, user: RunAs | undefined, password: string): Promise<void> => {
  const r = await run(bin.postgres, ["--single", "-D", l.pgData, "postgres"], {
    ...(user ? { runAs: user } : {}),
    cwd: l.runDir,
    timeoutMs: INITDB_TIMEOUT_MS,
    input: `ALTER USER postgres PASSWORD '${password}';\n`
  })
  if (r.code !== 0) throw new Error(`setting the embedded Postgres password failed (code ${r.code}):\n${r.output}`)
}

const ensureDatabase = async (port: number, password: string): Promise<void> => {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" })
  await client.connect()
  try {
    const found = await client.query("select 1 from pg_database where datname = $1", [DATABASE_NAME])
    if (found.rowCount === 0) await client.query(`create database ${DATABASE_NAME}`)
  } finally {
    await client.end()
  }
}

export interface LocalPostgres {
  readonly url: string
  readonly port: number
  readonly pid: number
  readonly stop: () => Promise<void>
}

export const startLocalPostgres = async (options: {
  readonly dataDir: string
  readonly binaries: PostgresBinaries
  readonly port?: number
}): Promise<LocalPostgres> => {
  const bin = options.binaries
  const l = layout(options.dataDir)
  const user = serverUser()
  mkdirSync(options.dataDir, { recursive: true })
  makePrivate(options.dataDir, user)
  if (user) ensureReachable(options.dataDir, user)
  ownedBy(l.pgData, user, 0o700)
  ownedBy(l.runDir, user, 0o700)

  const { password, made } = readOrMakePassword(options.dataDir)
  if (!existsSync(join(l.pgData, "PG_VERSION"))) await initdb(bin, l, user, password)
  else {
    await clearLeftovers(bin, l, user)
    if (made) await setPassword(bin, l, user, password)
  }
  writeFileSync(join(l.pgData, HBA_FILE), HBA)
  if (user) chownSync(join(l.pgData, HBA_FILE), user.uid, user.gid)

  const port = options.port ?? (await freePort())
  const socketDir = Buffer.byteLength(l.runDir) <= SOCKET_DIR_BYTES_MAX ? l.runDir : ""
  writeFileSync(
    join(l.pgData, CONF_FILE),
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = ${quoteConf(socketDir)}`,
      `unix_socket_permissions = 0700`,
      `hba_file = ${quoteConf(join(l.pgData, HBA_FILE))}`,
      `password_encryption = 'scram-sha-256'`,
      ""
    ].join("\n")
  )
  if (user) chownSync(join(l.pgData, CONF_FILE), user.uid, user.gid)

  const started = await pgCtl(bin, l, user, ["-l", l.logFile, "-w", "-t", String(PG_CTL_TIMEOUT_S), "start"])
  if (started.code !== 0) {
    throw new Error(`pg_ctl start failed (code ${started.code}):\n${started.output}\n${logTail(l.logFile)}`)
  }
  await ensureDatabase(port, password)
  const pid = readPostmasterPid(l.pgData)?.pid ?? -1
  let stopping: Promise<void> | undefined
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/${DATABASE_NAME}`,
    port,
    pid,
    stop: () => (stopping ??= stopServer(bin, l, user))
  }
}
