// Prints one plain closing line that any CI can read, with vitest's own counts (the same rules as
// its "Test Files", "Tests" and "Errors" lines: a file or test counts as failed or passed by its
// result, as skipped or todo by its mode; a test that never ran is only in the total):
//   Test Files: 1 failed, 55 passed (56); Tests: 2 failed, 410 passed, 1 skipped (414); Errors: 0
import { readFileSync, writeFileSync } from "node:fs"
import type { Reporter, RunnerTask, RunnerTestFile } from "vitest"

type Task = Pick<RunnerTask, "type" | "mode" | "result"> & { readonly tasks?: ReadonlyArray<Task> }

const testsOf = (tasks: ReadonlyArray<Task>): Array<Task> =>
  tasks.flatMap((t) => (t.type === "test" ? [t] : testsOf(t.tasks ?? [])))

const counts = (tasks: ReadonlyArray<Task>): string => {
  const parts = [
    [tasks.filter((t) => t.result?.state === "fail").length, "failed"],
    [tasks.filter((t) => t.result?.state === "pass").length, "passed"],
    [tasks.filter((t) => t.mode === "skip").length, "skipped"],
    [tasks.filter((t) => t.mode === "todo").length, "todo"]
  ] as const
  const shown = parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`)
  return `${shown.length > 0 ? shown.join(", ") : "none"} (${tasks.length})`
}

/** The closing line for these files and unhandled errors. */
export const summaryLine = (files: ReadonlyArray<Task>, errors: ReadonlyArray<unknown>): string =>
  `Test Files: ${counts(files)}; Tests: ${counts(testsOf(files))}; Errors: ${errors.length}`

export interface PlainCounts {
  readonly passed: number
  readonly failed: number
  readonly skipped: number
}

/**
 * What the plain line counts. A file that failed outside any test (an import, a hook) and an
 * unhandled error each count as one failure, so the line never says 0 failed for a red run.
 */
export const plainCounts = (files: ReadonlyArray<Task>, errors: ReadonlyArray<unknown>): PlainCounts => {
  const tests = testsOf(files)
  const failedTests = tests.filter((t) => t.result?.state === "fail").length
  const failedOutside = files.filter((f) => f.result?.state === "fail" && !testsOf([f]).some((t) => t.result?.state === "fail")).length
  return {
    passed: tests.filter((t) => t.result?.state === "pass").length,
    failed: failedTests + failedOutside + errors.length,
    skipped: tests.filter((t) => t.mode === "skip" || t.mode === "todo").length
  }
}

const addCounts = (a: PlainCounts, b: PlainCounts): PlainCounts =>
  ({ passed: a.passed + b.passed, failed: a.failed + b.failed, skipped: a.skipped + b.skipped })

const formatPlain = (c: PlainCounts) => `Tests: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`

/** The plain line CI reads (`Tests: N passed, N failed, N skipped`, alone on the last line). */
export const plainLine = (files: ReadonlyArray<Task>, errors: ReadonlyArray<unknown>): string => formatPlain(plainCounts(files, errors))

/**
 * With SHARDLINE_TEST_SUMMARY_CARRY naming a file (test/suite.sh: `npm test` is two vitest runs),
 * the plain line counts this run and the runs before it that wrote their counts there, so the
 * last line of `npm test` speaks for the whole suite.
 */
const carried = (mine: PlainCounts): PlainCounts => {
  const file = process.env.SHARDLINE_TEST_SUMMARY_CARRY
  if (file === undefined || file === "") return mine
  let before: PlainCounts = { passed: 0, failed: 0, skipped: 0 }
  try {
    const text = readFileSync(file, "utf8").trim()
    if (text !== "") before = JSON.parse(text) as PlainCounts
  } catch {
    // no run before this one
  }
  const total = addCounts(before, mine)
  writeFileSync(file, JSON.stringify(total))
  return total
}

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<RunnerTestFile> = [], errors: ReadonlyArray<unknown> = []) {
    process.stdout.write(`\n${summaryLine(files, errors)}\n${formatPlain(carried(plainCounts(files, errors)))}\n`)
  }
}
