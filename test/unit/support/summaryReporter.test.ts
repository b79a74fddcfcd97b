// The closing summary line says what vitest itself counts: a nested vitest run over fixture files
// (a failing hook, a failing import, failed/skipped/todo tests, an unhandled error), its own
// "Test Files", "Tests" and "Errors" lines read off its default reporter, compared with ours.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Writable } from "node:stream"
import { startVitest } from "vitest/node"
import { afterAll, describe, expect, it } from "vitest"
import SummaryReporter, { plainLine, summaryLine } from "../../support/summaryReporter.ts"

const fixtures: Record<string, string> = {
  "hook.test.ts": `import { beforeAll, it } from "vitest"
beforeAll(() => { throw new Error("hook fails") })
it("a", () => {}); it("b", () => {}); it("c", () => {})`,
  "mixed.test.ts": `import { it, expect } from "vitest"
it("passes", () => {}); it("fails", () => { expect(1).toBe(2) }); it.skip("skipped", () => {}); it.todo("todo")`,
  "import.test.ts": `throw new Error("cannot load")`,
  "unhandled.test.ts": `import { it } from "vitest"
it("leaves a rejection behind", () => { void Promise.reject(new Error("unhandled")) })`,
  "ok.test.ts": `import { it } from "vitest"
it("one", () => {}); it("two", () => {})`
}

const dir = mkdtempSync(join(tmpdir(), "summary-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const sink = () => {
  let text = ""
  return { stream: new Writable({ write(chunk, _enc, done) { text += String(chunk); done() } }), text: () => text }
}

describe("summary line", () => {
  it("carries vitest's own file, test and error counts", async () => {
    for (const [name, body] of Object.entries(fixtures)) writeFileSync(join(dir, name), body)
    const out = sink()
    const err = sink()
    const vitest = await startVitest("test", [], {
      root: dir, watch: false, reporters: ["default"], include: ["*.test.ts"], pool: "threads", dangerouslyIgnoreUnhandledErrors: true
    }, {}, { stdout: out.stream, stderr: err.stream })
    const files = vitest.state.getFiles()
    const errors = vitest.state.getUnhandledErrors()
    await vitest.close()
    // eslint-disable-next-line no-control-regex
    const own = (out.text() + err.text()).replace(/\x1b\[[0-9;]*m/g, "")
    const field = (title: string) => own.match(new RegExp(`^\\s*${title}\\s+(.+)$`, "m"))?.[1]?.trim()
    const ours = summaryLine(files, errors)
    const theirs = `Test Files: ${field("Test Files")}; Tests: ${field("Tests")}; Errors: ${field("Errors")}`
      .replaceAll(" | ", ", ").replace(/Errors: (\d+) errors?$/, "Errors: $1")
    expect(ours).toBe(theirs)
    // Pinned too, so a reporter change on either side is seen: the failing hook skips its three
    // tests, the failing import has none, the unhandled rejection is an error, not a failed test.
    expect(ours).toBe("Test Files: 3 failed, 2 passed (5); Tests: 1 failed, 4 passed, 4 skipped, 1 todo (10); Errors: 1")
    // The plain line CI reads never calls a red run green: the failing test, the file that failed in
    // its hook (its tests skipped), the failing import and the unhandled error each count.
    expect(plainLine(files, errors)).toBe("Tests: 4 passed, 4 failed, 5 skipped")
  }, 60_000)

  it("counts the runs before it when npm test is several vitest runs (SHARDLINE_TEST_SUMMARY_CARRY)", () => {
    const file = (states: ReadonlyArray<"pass" | "fail">) => ({
      type: "suite", mode: "run", result: { state: states.includes("fail") ? "fail" : "pass" },
      tasks: states.map((state) => ({ type: "test", mode: "run", result: { state } }))
    })
    const printed: Array<string> = []
    const write = process.stdout.write
    const carry = join(dir, "carry.json")
    process.env.SHARDLINE_TEST_SUMMARY_CARRY = carry
    try {
      process.stdout.write = ((chunk: string) => { printed.push(String(chunk)); return true }) as typeof process.stdout.write
      const reporter = new SummaryReporter()
      reporter.onFinished([file(["pass", "pass"])] as never, [])
      reporter.onFinished([file(["pass", "fail"])] as never, [])
    } finally {
      process.stdout.write = write
      delete process.env.SHARDLINE_TEST_SUMMARY_CARRY
    }
    const lastLines = printed.map((p) => p.trim().split("\n").at(-1))
    expect(lastLines).toEqual(["Tests: 2 passed, 0 failed, 0 skipped", "Tests: 3 passed, 1 failed, 0 skipped"])
  })
})
