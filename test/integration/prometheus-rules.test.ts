// The alert rules that ship (issue 26, point 4): deploy/prometheus/alerts.yml is valid for
// Prometheus (`promtool check rules`), its unit tests pass (`promtool test rules`: a killed node
// fires ShardlineNodeDown, ShardlineRunnerLost and, when nobody takes its shards, ShardlineShardsUnowned;
// timers, attestations, the database, 5xx and restart storms each fire on their own series and not
// on healthy ones), and a broken rule file is refused, so the check is not vacuous. promtool is
// Debian's `prometheus` package; the global setup installs it like chromium and litecoind.
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const dir = join(process.cwd(), "deploy", "prometheus")

const promtool = (args: ReadonlyArray<string>, cwd = dir) => {
  const r = spawnSync("promtool", args, { cwd, encoding: "utf8", timeout: 60_000 })
  return { status: r.status, out: `${r.stdout}${r.stderr}` }
}

describe("deploy/prometheus/alerts.yml", () => {
  it("passes promtool check rules, with every alert the issue names", () => {
    const r = promtool(["check", "rules", "alerts.yml"])
    expect(r.out).toMatch(/SUCCESS: \d+ rules found/)
    expect(r.status).toBe(0)
    const names = [...readFileSync(join(dir, "alerts.yml"), "utf8").matchAll(/^\s*- alert: (\S+)/gm)].map((m) => m[1])
    expect(names).toEqual(expect.arrayContaining([
      "ShardlineRunnerLost", "ShardlineShardsUnowned", "ShardlineTimersLate", "ShardlineEntityRestartStorm",
      "ShardlineChainFollowerStalled", "ShardlineAttestationOverdue", "ShardlineDatabaseDown", "ShardlineHttp5xxRate"
    ]))
  })

  it("fires as its unit tests say (promtool test rules alerts.test.yml)", () => {
    const r = promtool(["test", "rules", "alerts.test.yml"])
    expect(r.out).toContain("SUCCESS")
    expect(r.status).toBe(0)
  })

  it("is checked for real: a rule with a broken expression or a wrong expectation fails", () => {
    const scratch = mkdtempSync(join(tmpdir(), "sl-rules-"))
    const rules = readFileSync(join(dir, "alerts.yml"), "utf8")
    writeFileSync(join(scratch, "broken.yml"), rules.replace("expr: shardline_database_up == 0", "expr: shardline_database_up == == 0"))
    const broken = promtool(["check", "rules", "broken.yml"], scratch)
    expect(broken.status).not.toBe(0)
    expect(broken.out).toMatch(/parse error|unexpected/)
    // The rules with ShardlineDatabaseDown's threshold moved: the unit test that expects it to fire fails.
    writeFileSync(join(scratch, "alerts.yml"), rules.replace("expr: shardline_database_up == 0", "expr: shardline_database_up < 0"))
    writeFileSync(join(scratch, "alerts.test.yml"), readFileSync(join(dir, "alerts.test.yml"), "utf8"))
    const wrong = promtool(["test", "rules", "alerts.test.yml"], scratch)
    expect(wrong.status).not.toBe(0)
    expect(wrong.out).toContain("ShardlineDatabaseDown")
  })
})
