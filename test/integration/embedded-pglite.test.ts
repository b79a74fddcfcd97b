// The PGlite engine end to end: a child process, our multiplexer, real pg clients.
// Covers the password every connection must prove (SCRAM-SHA-256), the interleaving bug of stock
// pglite-socket (notes/embedded-db-brief.md), transactions, LISTEN/NOTIFY fan-out, @effect/sql-pg
// with the migrator, attaching, and a restart.
import { NodeContext } from "@effect/platform-node"
import { Migrator, SqlClient } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Chunk, Effect, Fiber, Layer, Redacted, Stream } from "effect"
import { type ChildProcess, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  connectOrStartEmbedded,
  type EmbeddedPostgres,
  startEmbeddedPostgres
} from "../../src/platform/database/embedded/EmbeddedPostgres.ts"
import { PASSWORD_FILE } from "../../src/platform/database/embedded/password.ts"
import { query, startupPacket } from "../../src/platform/database/embedded/pgWire.ts"
import { isAlive } from "../../src/platform/database/embedded/processes.ts"
import { exitOf, otherProcess } from "./embedded-other-process.ts"

let root: string
let dataDir: string
const spawned: Array<ChildProcess> = []
let db: EmbeddedPostgres
let pool: pg.Pool

/** Fails instead of hanging: a wedged session is exactly the bug being tested for. */
const within = <A>(ms: number, what: string, p: Promise<A>): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

const count = async (sql: string): Promise<number> => Number((await pool.query<{ n: string }>(sql)).rows[0]!.n)

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "shardline-pglite-"))
  dataDir = join(root, "data")
  const t0 = performance.now()
  db = await startEmbeddedPostgres({ dataDir, engine: "pglite" })
  console.log(`pglite first start (new dataDir): ${Math.round(performance.now() - t0)} ms`)
  pool = new pg.Pool({ connectionString: db.url, max: 10 })
  pool.on("error", () => {})
}, 120_000)

afterAll(async () => {
  for (const c of spawned) c.kill("SIGKILL")
  await pool?.end().catch(() => {})
  await db?.stop()
  if (root) rmSync(root, { recursive: true, force: true })
})

describe("PGlite engine", () => {
  it("runs in a child process and publishes itself in the discovery file", async () => {
    expect(db.kind).toBe("pglite")
    expect(db.serverPid).not.toBe(process.pid)
    const discovery = JSON.parse(readFileSync(join(dataDir, "embedded-postgres.json"), "utf8"))
    expect(discovery).toMatchObject({ url: db.url, kind: "pglite", pid: process.pid })
    const { rows } = await pool.query<{ v: string }>("select version() as v")
    expect(rows[0]!.v).toContain("PGlite")
  })

  it("asks every connection for the password in the 0600 file (SCRAM-SHA-256): none or a wrong one is refused", async () => {
    const password = readFileSync(join(dataDir, PASSWORD_FILE), "utf8").trim()
    expect(password).toMatch(/^[0-9a-f]{64}$/)
    expect((statSync(join(dataDir, PASSWORD_FILE)).mode & 0o777).toString(8)).toBe("600")
    expect((statSync(join(dataDir, "embedded-postgres.json")).mode & 0o777).toString(8)).toBe("600")
    expect(db.url).toContain(`postgres:${password}@`)
    const port = Number(new URL(db.url).port)
    const tryUrl = async (change: (u: URL) => void) => {
      const u = new URL(db.url)
      change(u)
      const c = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 10_000 })
      c.on("error", () => {})
      try {
        await c.connect()
        return String((await c.query("select current_user as u")).rows[0].u)
      } catch (e) {
        return `refused: ${(e as Error).message}`
      } finally {
        await c.end().catch(() => {})
      }
    }
    expect(await tryUrl(() => {})).toBe("postgres")
    expect(await tryUrl((u) => (u.password = "0".repeat(64)))).toBe(`refused: password authentication failed for user "postgres"`)
    expect(await tryUrl((u) => (u.username = "mallory"))).toBe(`refused: password authentication failed for user "mallory"`)
    // No password: node-postgres gives up itself once asked for SCRAM; a client that goes on as if
    // trusted (the raw bytes below) gets a FATAL and no session.
    expect(await tryUrl((u) => (u.password = ""))).toMatch(/^refused: .*password/)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1")
      const chunks: Array<Buffer> = []
      socket.on("data", (c) => chunks.push(c))
      socket.on("error", reject)
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")))
      socket.on("connect", () => socket.write(Buffer.concat([startupPacket({ user: "postgres", database: "postgres" }), query("select 1")])))
    })
    expect(answer.startsWith("R")).toBe(true) // AuthenticationSASL
    expect(answer).toContain("SCRAM-SHA-256")
    expect(answer).toContain("C08P01")
    expect(answer).not.toContain("Z") // never ReadyForQuery
    // libpq (psql) speaks SCRAM with the same server: the right password in, a missing one out.
    const psql = (env: Record<string, string>) =>
      spawnSync("psql", ["-w", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-Atc", "select 41 + 1"], {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", LC_ALL: "C", ...env },
        timeout: 20_000
      })
    const withPassword = psql({ PGPASSWORD: password })
    if (withPassword.error === undefined) { // psql is on this machine
      expect(withPassword.stdout.trim()).toBe("42")
      const without = psql({})
      expect(without.status).not.toBe(0)
      expect(without.stderr).toMatch(/password/)
    }
  })

  it("keeps 400 concurrent inserts with 300 KB parameters in their own tables (10 connections)", async () => {
    await pool.query("create table ta (id serial primary key, v text not null, l int not null)")
    await pool.query("create table tb (id serial primary key, v text not null, l int not null)")
    const big = "x".repeat(300 * 1024)
    const results = await within(
      60_000,
      "400 concurrent inserts",
      Promise.allSettled(
        Array.from({ length: 400 }, (_, i) => {
          const t = i % 2 === 0 ? "ta" : "tb"
          return pool.query(`insert into ${t}(v, l) values ($1, length($2))`, [`${t}-${i}`, t === "ta" ? big : "small"])
        })
      )
    )
    expect(results.filter((r) => r.status === "rejected")).toEqual([])
    expect(await count("select count(*) as n from ta where v not like 'ta-%' or l <> 307200")).toBe(0)
    expect(await count("select count(*) as n from tb where v not like 'tb-%' or l <> 5")).toBe(0)
    expect(await count("select count(*) as n from ta")).toBe(200)
    expect(await count("select count(*) as n from tb")).toBe(200)
  }, 90_000)

  it("commits and rolls back", async () => {
    await pool.query("create table tx (k text primary key, n int not null)")
    const c = await pool.connect()
    try {
      await c.query("begin")
      await c.query("insert into tx values ('kept', 1)")
      await c.query("commit")
      await c.query("begin")
      await c.query("insert into tx values ('dropped', 1)")
      // Another connection must not see (or wait forever behind) the open transaction's row.
      await c.query("rollback")
    } finally {
      c.release()
    }
    const { rows } = await pool.query<{ k: string }>("select k from tx order by k")
    expect(rows.map((r) => r.k)).toEqual(["kept"])
  })

  it("serialises concurrent FOR UPDATE increments exactly", async () => {
    await pool.query("insert into tx values ('counter', 0)")
    const increment = async () => {
      const c = await pool.connect()
      try {
        await c.query("begin")
        const { rows } = await c.query<{ n: number }>("select n from tx where k = 'counter' for update")
        await new Promise((r) => setTimeout(r, 5)) // hold the session across an await, like real code
        await c.query("update tx set n = $1 where k = 'counter'", [rows[0]!.n + 1])
        await c.query("commit")
      } finally {
        c.release()
      }
    }
    await within(30_000, "concurrent increments", Promise.all(Array.from({ length: 5 }, increment)))
    await within(30_000, "more concurrent increments", Promise.all(Array.from({ length: 20 }, increment)))
    expect(await count("select n from tx where k = 'counter'")).toBe(25)
  }, 60_000)

  it("a failed statement inside a transaction, then ROLLBACK, does not wedge other connections", async () => {
    const a = await pool.connect()
    try {
      await a.query("begin")
      await a.query("insert into tx values ('in-failed-tx', 1)")
      await expect(a.query("select * from no_such_table")).rejects.toThrow(/no_such_table/)
      // While a holds the failed transaction, b waits; it must run right after a's ROLLBACK.
      const b = pool.query<{ n: string }>("select count(*) as n from tx where k = 'in-failed-tx'")
      await expect(a.query("select 1")).rejects.toThrow(/current transaction is aborted/)
      await a.query("rollback")
      expect(Number((await within(10_000, "query after rollback", b)).rows[0]!.n)).toBe(0)
    } finally {
      a.release()
    }
    // An extended-protocol error outside a transaction (bad parameter) leaves the session usable.
    await expect(pool.query("select $1::int as x", ["not a number"])).rejects.toThrow(/invalid input syntax/)
    expect((await within(10_000, "query after error", pool.query("select 2 as x"))).rows[0]).toEqual({ x: 2 })
  })

  it("rolls back the transaction of a connection that disappears mid-way", async () => {
    const c = new pg.Client({ connectionString: db.url })
    c.on("error", () => {})
    await c.connect()
    await c.query("begin")
    await c.query("insert into tx values ('abandoned', 1)")
    // Kill the TCP connection without Terminate, as a crashed client would.
    ;(c as unknown as { connection: { stream: { destroy: () => void } } }).connection.stream.destroy()
    const n = await within(10_000, "query after abandoned transaction", count("select count(*) as n from tx where k = 'abandoned'"))
    expect(n).toBe(0)
  })

  it("delivers pg_notify to a LISTEN on another connection", async () => {
    const listener = new pg.Client({ connectionString: db.url })
    await listener.connect()
    try {
      const got = new Promise<pg.Notification>((resolve) => listener.on("notification", resolve))
      await listener.query("listen ch")
      await pool.query("select pg_notify('ch', 'x')")
      const n = await within(5_000, "notification", got)
      expect(n).toMatchObject({ channel: "ch", payload: "x" })
    } finally {
      await listener.end()
    }
  })

  it("serves @effect/sql-pg: PgMigrator, transactions and PgClient.listen", async () => {
    const migrations = Migrator.fromRecord({
      "0001_widgets": Effect.flatMap(SqlClient.SqlClient, (sql) => sql`create table widgets (id serial primary key, name text not null)`)
    })
    const program = Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const client = yield* PgClient.PgClient
      const first = yield* PgMigrator.run({ loader: migrations, table: "test_migrations" })
      const again = yield* PgMigrator.run({ loader: migrations, table: "test_migrations" })
      yield* sql.withTransaction(sql`insert into widgets (name) values ('a'), ('b')`)
      yield* sql.withTransaction(Effect.zipRight(sql`insert into widgets (name) values ('c')`, Effect.fail("abort"))).pipe(
        Effect.ignore
      )
      const names = (yield* sql<{ name: string }>`select name from widgets order by id`).map((r) => r.name)
      const listening = yield* client.listen("widgets").pipe(Stream.take(1), Stream.runCollect, Effect.fork)
      yield* Effect.sleep("200 millis") // let LISTEN reach the session first
      yield* sql`select pg_notify('widgets', 'added')`
      const notified = yield* Fiber.join(listening).pipe(Effect.timeout("5 seconds"))
      return { first, again, names, notified: Chunk.toReadonlyArray(notified) }
    })
    const result = await Effect.runPromise(
      program.pipe(
        Effect.scoped,
        Effect.provide(Layer.mergeAll(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 10 }), NodeContext.layer))
      )
    )
    expect(result.first).toEqual([[1, "widgets"]])
    expect(result.again).toEqual([])
    expect(result.names).toEqual(["a", "b"])
    expect(result.notified).toEqual(["added"])
  }, 30_000)

  it("lets a second caller attach to the running system instead of starting another", async () => {
    const attached = await connectOrStartEmbedded({ dataDir })
    expect(attached).toMatchObject({ url: db.url, kind: "pglite", attached: true })
    await attached.stop() // a no-op for an attached handle
    expect((await pool.query("select 1 as x")).rows[0]).toEqual({ x: 1 })
    await expect(startEmbeddedPostgres({ dataDir, engine: "pglite" })).rejects.toThrow(/held by process/)
  })

  it("keeps the data across a stop and a start on the same dataDir", async () => {
    await pool.end()
    await db.stop()
    expect(existsSync(join(dataDir, "embedded-postgres.json"))).toBe(false)
    const t0 = performance.now()
    db = await startEmbeddedPostgres({ dataDir }) // auto keeps the engine that holds the data
    console.log(`pglite restart (existing dataDir): ${Math.round(performance.now() - t0)} ms`)
    expect(db.kind).toBe("pglite")
    pool = new pg.Pool({ connectionString: db.url, max: 4 })
    expect(await count("select count(*) as n from ta")).toBe(200)
    expect(await count("select n from tx where k = 'counter'")).toBe(25)
    expect(await count("select count(*) as n from widgets")).toBe(2)
  }, 60_000)

  it("takes over after the owning app was killed, once its PGlite child has closed the dataDir", async () => {
    await pool.end()
    await db.stop()
    const owner = await otherProcess({ dataDir, scriptDir: root, engine: "pglite", mode: "hold", spawned })
    expect(owner.attached).toBe(false)
    owner.child.kill("SIGKILL")
    await exitOf(owner.child)
    db = await connectOrStartEmbedded({ dataDir })
    expect(db).toMatchObject({ kind: "pglite", attached: false })
    expect(isAlive(owner.serverPid)).toBe(false)
    pool = new pg.Pool({ connectionString: db.url, max: 4 })
    expect(await count("select count(*) as n from ta")).toBe(200)
  }, 60_000)
})
