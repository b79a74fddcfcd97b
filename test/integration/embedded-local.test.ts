// The local-postgres engine with this machine's binaries. The tests run as root here, so the
// non-root path (initdb and postgres as the `postgres` user) is the one exercised.
import { Effect } from "effect"
import type { ChildProcess } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  connectOrStartEmbedded,
  type EmbeddedPostgres,
  embeddedPostgresScoped,
  startEmbeddedPostgres
} from "../../src/platform/database/embedded/EmbeddedPostgres.ts"
import { findPostgresBinaries, serverUser } from "../../src/platform/database/embedded/LocalPostgres.ts"
import { isAlive } from "../../src/platform/database/embedded/processes.ts"
import { exitOf, otherProcess } from "./embedded-other-process.ts"

let root: string
let dataDir: string
let db: EmbeddedPostgres | undefined
const children: Array<ChildProcess> = []

const queryOne = async <R,>(url: string, sql: string): Promise<R> => {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query(sql)).rows[0] as R
  } finally {
    await c.end()
  }
}

const timed = async <A>(label: string, f: () => Promise<A>): Promise<A> => {
  const t0 = performance.now()
  const a = await f()
  console.log(`${label}: ${Math.round(performance.now() - t0)} ms`)
  return a
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "shardline-localpg-"))
  // Like a project checkout: enterable by the server user (mkdtemp makes it 0700).
  chmodSync(root, 0o755)
  dataDir = join(root, "data")
})

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL")
  await db?.stop()
  if (root) rmSync(root, { recursive: true, force: true })
})

describe("local postgres engine", () => {
  it("finds the binaries on this machine", () => {
    expect(findPostgresBinaries()).toBeDefined()
  })

  it("as root, refuses clearly when the server user cannot reach the data dir", async () => {
    if (process.getuid?.() !== 0) return expect(serverUser()).toBeUndefined()
    const closed = join(root, "closed")
    mkdirSync(closed, { mode: 0o700 })
    await expect(startEmbeddedPostgres({ dataDir: join(closed, "data"), engine: "postgres" })).rejects.toThrow(/cannot enter .*closed/)
    expect(existsSync(join(closed, "data", "embedded-postgres.lock"))).toBe(false)
  })

  it("initialises a cluster on first start, owned by a non-root user, and serves the shardline database", async () => {
    db = await timed("local postgres first start (initdb)", () => startEmbeddedPostgres({ dataDir }))
    expect(db.kind).toBe("postgres")
    expect(db.url).toMatch(/^postgres:\/\/postgres:[0-9a-f]{64}@127\.0\.0\.1:\d+\/shardline$/)
    const row = await queryOne<{ db: string; v: string }>(db.url, "select current_database() as db, version() as v")
    expect(row.db).toBe("shardline")
    expect(row.v).toMatch(/^PostgreSQL \d+/)
    const user = serverUser()
    if (process.getuid?.() === 0) {
      expect(user).toBeDefined()
      expect(statSync(join(dataDir, "pg")).uid).toBe(user!.uid)
      expect(statSync(join(dataDir, "pg")).uid).not.toBe(0)
    }
    await queryOne(db.url, "create table kept (v text)")
    await queryOne(db.url, "insert into kept values ('before restart')")
  })

  it("restarts on the existing cluster quickly, data intact", async () => {
    await db!.stop()
    db = await timed("local postgres restart", () => startEmbeddedPostgres({ dataDir }))
    expect(await queryOne(db.url, "select v from kept")).toEqual({ v: "before restart" })
  })

  it("another process attaches to the running system and leaves it running", async () => {
    const other = await otherProcess({ dataDir, scriptDir: root, engine: "postgres", mode: "exit", spawned: children })
    expect(other).toMatchObject({ url: db!.url, attached: true })
    await exitOf(other.child)
    expect(await queryOne(db!.url, "select count(*)::int as n from kept")).toEqual({ n: 1 })
  }, 30_000)

  it("recovers after the postmaster was killed (stale postmaster.pid)", async () => {
    process.kill(db!.serverPid, "SIGKILL")
    await db!.stop() // pg_ctl finds nothing to stop; must not throw
    db = await timed("local postgres start after kill -9 of the postmaster", () => startEmbeddedPostgres({ dataDir }))
    expect(await queryOne(db.url, "select v from kept")).toEqual({ v: "before restart" })
  }, 60_000)

  it("takes over when the owning app was killed and left its postmaster running", async () => {
    await db!.stop()
    db = undefined
    const owner = await otherProcess({ dataDir, scriptDir: root, engine: "postgres", mode: "hold", spawned: children })
    expect(owner.attached).toBe(false)
    owner.child.kill("SIGKILL")
    await exitOf(owner.child)
    expect(isAlive(owner.serverPid)).toBe(true) // the orphan postmaster
    db = await connectOrStartEmbedded({ dataDir })
    expect(db.attached).toBe(false)
    expect(isAlive(owner.serverPid)).toBe(false)
    expect(await queryOne(db.url, "select v from kept")).toEqual({ v: "before restart" })
  }, 60_000)

  it("stops cleanly and unpublishes itself", async () => {
    const url = db!.url
    await db!.stop()
    db = undefined
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
    await expect(c.connect()).rejects.toThrow()
    expect(existsSync(join(dataDir, "embedded-postgres.json"))).toBe(false)
    expect(existsSync(join(dataDir, "embedded-postgres.lock"))).toBe(false)
  })

  it("the scoped Effect starts the system and stops it when the scope closes", async () => {
    const url = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const embedded = yield* embeddedPostgresScoped({ dataDir })
          const row = yield* Effect.promise(() => queryOne<{ v: string }>(embedded.url, "select v from kept"))
          expect(row.v).toBe("before restart")
          return embedded.url
        })
      )
    )
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
    await expect(c.connect()).rejects.toThrow()
  })
})
