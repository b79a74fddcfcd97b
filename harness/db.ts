// A fresh database per test file on the real Postgres (127.0.0.1:5432, trust auth, or
// SHARDLINE_TEST_DATABASE_URL), dropped afterwards, so test files can run in parallel.
import { randomBytes } from "node:crypto"
import pg from "pg"

export const adminUrl = process.env.SHARDLINE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

export interface TestDatabase {
  readonly url: string
  readonly name: string
  readonly query: <R = Record<string, unknown>>(text: string, params?: ReadonlyArray<unknown>) => Promise<Array<R>>
  readonly drop: () => Promise<void>
}

const withAdmin = async <A>(f: (c: pg.Client) => Promise<A>): Promise<A> => {
  const c = new pg.Client({ connectionString: adminUrl })
  await c.connect()
  try {
    return await f(c)
  } finally {
    await c.end()
  }
}

export const createTestDatabase = async (label = "t"): Promise<TestDatabase> => {
  const name = `sl_${label.replace(/[^a-z0-9]/g, "")}_${randomBytes(4).toString("hex")}`
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`))
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  const url = u.toString()
  const pool = new pg.Pool({ connectionString: url, max: 3 })
  // drop() terminates what is still connected (DROP … WITH (FORCE)); a client still closing then
  // gets "terminating connection due to administrator command", which must not become an
  // unhandled error of the whole run.
  pool.on("error", () => {})
  pool.on("connect", (client) => client.on("error", () => {}))
  return {
    url,
    name,
    query: async <R,>(text: string, params?: ReadonlyArray<unknown>) =>
      (await pool.query(text, params as Array<unknown> | undefined)).rows as Array<R>,
    drop: async () => {
      await pool.end()
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }
}
