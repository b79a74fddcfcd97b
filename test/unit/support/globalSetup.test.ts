// The global setup stops at once, naming the one command to run, when it cannot provide
// Postgres itself (here: a server that is not on this machine, so not ours to start).
import { describe, expect, it } from "vitest"
import { ensurePostgres } from "../../support/globalSetup.ts"
import { freePort } from "../../../harness/ports.ts"

describe("test global setup", () => {
  it("a Postgres it cannot start fails fast with the command that would fix it", async () => {
    const started = Date.now()
    const url = `postgres://postgres@127.0.0.2:${await freePort()}/test`
    await expect(ensurePostgres(url)).rejects.toThrow(/^no Postgres answers at 127\.0\.0\.2:\d+; run: .*pg_ctlcluster --skip-systemctl-redirect \$\(ls \/etc\/postgresql\) main start$/)
    expect(Date.now() - started).toBeLessThan(10_000)
  })
})
