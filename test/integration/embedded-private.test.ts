// Issue 8, item 3: the embedded Postgres is private to its owner. Before: trust auth for every
// local connection, its URL in a 0644 state file, data dir 0755; as `nobody`, psql connected as
// superuser and `COPY ... TO PROGRAM` ran commands. Here the test runs as root and tries as nobody.
import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../../src/platform/database/embedded/EmbeddedPostgres.ts"
import { findPostgresBinaries, PASSWORD_FILE } from "../../src/platform/database/embedded/LocalPostgres.ts"

const asRoot = process.getuid?.() === 0
let root: string
let dataDir: string
let db: EmbeddedPostgres | undefined

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "sl-private-"))
  chmodSync(root, 0o755)
  dataDir = join(root, "data")
  db = await startEmbeddedPostgres({ dataDir, engine: "postgres" })
}, 120_000)

afterAll(async () => {
  await db?.stop()
  rmSync(root, { recursive: true, force: true })
})

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8)
const psqlBin = () => {
  const beside = join(findPostgresBinaries()!.dir, "psql")
  return existsSync(beside) ? beside : "psql"
}

/** psql as `nobody`, with everything a local user could know except the password. */
const psqlAsNobody = (args: ReadonlyArray<string>) =>
  spawnSync("runuser", ["-u", "nobody", "--", psqlBin(), "-w", ...args, "-c", "select 1"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", LC_ALL: "C" },
    timeout: 20_000
  })

describe("embedded Postgres, private to its owner", () => {
  it("keeps the data dir, the state file and the password file to its owner", () => {
    expect(["700", "710"]).toContain(mode(dataDir))
    expect(mode(join(dataDir, "embedded-postgres.json"))).toBe("600")
    expect(mode(join(dataDir, "embedded-postgres.lock"))).toBe("600")
    expect(mode(join(dataDir, PASSWORD_FILE))).toBe("600")
    expect(mode(join(dataDir, "pg"))).toBe("700")
    expect(mode(join(dataDir, "pg-run"))).toBe("700")
    const password = readFileSync(join(dataDir, PASSWORD_FILE), "utf8").trim()
    expect(password).toMatch(/^[0-9a-f]{64}$/)
    expect(db!.url).toContain(`:${password}@`)
  })

  it("answers its owner, who has the password", async () => {
    const c = new pg.Client({ connectionString: db!.url })
    await c.connect()
    try {
      expect((await c.query("select current_user as u")).rows[0].u).toBe("postgres")
    } finally {
      await c.end()
    }
  })

  it("refuses a connection without the password, on TCP and on the socket", async () => {
    const url = new URL(db!.url)
    url.password = ""
    const c = new pg.Client({ connectionString: url.toString() })
    await expect(c.connect()).rejects.toThrow()
    await c.end().catch(() => {})
    const wrong = new URL(db!.url)
    wrong.password = "guess"
    const w = new pg.Client({ connectionString: wrong.toString() })
    await expect(w.connect()).rejects.toThrow(/password authentication failed/)
    await w.end().catch(() => {})
  })

  it.runIf(asRoot)("gives a local user without the files no connection (psql as nobody)", () => {
    const port = new URL(db!.url).port
    const tcp = psqlAsNobody(["-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", "shardline"])
    expect(tcp.status).not.toBe(0)
    expect(tcp.stderr).toMatch(/password/)
    const socket = psqlAsNobody(["-h", join(dataDir, "pg-run"), "-p", port, "-U", "postgres", "-d", "shardline"])
    expect(socket.status).not.toBe(0)
    const cat = spawnSync("runuser", ["-u", "nobody", "--", "cat", join(dataDir, "embedded-postgres.json")], { encoding: "utf8" })
    expect(cat.status).not.toBe(0)
    const ls = spawnSync("runuser", ["-u", "nobody", "--", "ls", dataDir], { encoding: "utf8" })
    expect(ls.status).not.toBe(0)
  })

  it("a cluster made with trust auth gets a password on its next start", async () => {
    await db!.stop()
    // What an old data dir looks like: no password file (and a cluster whose user has none).
    rmSync(join(dataDir, PASSWORD_FILE))
    db = await startEmbeddedPostgres({ dataDir, engine: "postgres" })
    const password = readFileSync(join(dataDir, PASSWORD_FILE), "utf8").trim()
    expect(db.url).toContain(`:${password}@`)
    const c = new pg.Client({ connectionString: db.url })
    await c.connect()
    await c.end()
    const wrong = new URL(db.url)
    wrong.password = "x"
    const w = new pg.Client({ connectionString: wrong.toString() })
    await expect(w.connect()).rejects.toThrow(/password authentication failed/)
    await w.end().catch(() => {})
  }, 60_000)
})
