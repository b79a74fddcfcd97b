// Prints one plain closing line, "Tests: N passed, N failed, N skipped", that any CI can read.
import type { Reporter, RunnerTask, RunnerTestFile } from "vitest"

const count = (tasks: ReadonlyArray<RunnerTask>, acc = { passed: 0, failed: 0, skipped: 0 }) => {
  for (const t of tasks) {
    if (t.type === "test") {
      const state = t.result?.state
      if (state === "pass") acc.passed++
      else if (state === "fail") acc.failed++
      else acc.skipped++
    } else if ("tasks" in t) {
      count(t.tasks, acc)
      // A suite that failed outside its tests (a hook) counts as a failure.
      if (t.result?.state === "fail" && t.tasks.every((c) => c.result?.state !== "fail")) acc.failed++
    }
  }
  return acc
}

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<RunnerTestFile> = []) {
    const c = count(files)
    process.stdout.write(`\nTests: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped\n`)
  }
}
