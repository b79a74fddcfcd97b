// Summarises `perf script` output of a node process recorded with `perf record -g -p <pid>` while
// it ran with --perf-basic-prof-only-functions (its JS frames named in /tmp/perf-<pid>.map).
//
// Why beside the V8 profile (bench/parts/cpuProfile.ts): V8's sampler counts wall time on the
// main thread, so a socket write that wakes a Postgres backend which then runs on our core is
// counted as our `writev` until we run again (13–19 % of the orders bench's profile in session
// 26, while the node's system time was 11 % of its CPU). perf's cpu-clock samples a thread only
// while it runs, and sees the kernel's and the other threads' share (GC helpers, the compiler).
// A limit: /tmp/perf-<pid>.map only grows, so code that V8 freed and put elsewhere can be named
// for the older function at its address; a small share of an unrelated file (coinPool.ts in a
// mix with no trades, 2.5 %, in session 26) is that, not work done.

export interface PerfSample {
  readonly tid: number
  /** Innermost first, as perf prints them. */
  readonly frames: ReadonlyArray<{ readonly sym: string; readonly dso: string }>
}

/** The samples of `perf script`'s default output (a header line, then one line per frame, a blank line between samples). */
export const parsePerfScript = (text: string): Array<PerfSample> => {
  const samples: Array<PerfSample> = []
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split("\n").filter((l) => l.trim() !== "")
    const head = lines[0]
    if (head === undefined) continue
    // "<comm> <tid> [cpu] <time>: <period> <event>:" — the comm may hold spaces; the tid is the first all-digit field after it.
    const tidField = head.trim().split(/\s+/).slice(1).find((f) => /^\d+$/.test(f))
    if (tidField === undefined) continue
    const frames = lines.slice(1).map((l) => {
      const m = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^()]*)\)\s*$/.exec(l)
      return m === null ? { sym: l.trim(), dso: "" } : { sym: m[1]!, dso: m[2]! }
    })
    samples.push({ tid: Number(tidField), frames })
  }
  return samples
}

const projectFile = (sym: string): string | undefined => {
  if (!sym.startsWith("JS:") || sym.includes("node_modules")) return undefined
  const m = /\/((?:src|cluster|schemas)\/[^:\s]+?)(?::\d+)+/.exec(sym)
  return m === null ? undefined : m[1]
}

/** Where the innermost frame of a sample runs: our file, a package, Node's own JS, GC, the kernel, V8 and native code. */
export const areaOfFrame = (f: { readonly sym: string; readonly dso: string }): string => {
  if (f.dso.includes("kernel")) return "(kernel)"
  if (/Scavenge|MarkCompact|Heap::|GCTracer|Sweeper|ConcurrentMarking|MinorMC/.test(f.sym)) return "(gc)"
  if (f.sym.startsWith("JS:")) {
    if (/wasm-function/.test(f.sym)) return "(wasm)"
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f.sym)
    if (pkg !== null) return pkg[1]!
    const project = projectFile(f.sym)
    if (project !== undefined) return project.split("/").slice(0, 3).join("/")
    const nodeModule = /\snode:(?:internal\/)?([a-z_]+)/.exec(f.sym)
    if (nodeModule !== null) return `node:${nodeModule[1]}`
    return "(JS, other)"
  }
  if (/perf-\d+\.map/.test(f.dso)) return "(JS, unnamed code)"
  if (f.sym.startsWith("Builtins_")) return "(V8 builtins)"
  if (/libc\.so|libstdc\+\+/.test(f.dso)) return "(libc)"
  return "(native: node, V8, libuv)"
}

/**
 * Where a sample ran: the kernel or GC when the innermost frame is theirs (GC found below the
 * first JS frame), else the first JS frame's area (a V8 builtin or native call made by JS counts
 * for that JS: 30 % of the loop's samples are builtins such as LoadIC, which say nothing alone),
 * else native code with no JS above it.
 */
export const areaOfSample = (s: PerfSample): string => {
  const inner = s.frames[0]
  if (inner === undefined) return "(none)"
  if (inner.dso.includes("kernel")) return "(kernel)"
  for (const f of s.frames) {
    const area = areaOfFrame(f)
    if (area === "(gc)") return area
    if (f.sym.startsWith("JS:") || /perf-\d+\.map/.test(f.dso)) return area
  }
  return areaOfFrame(inner)
}

export interface OnCpuSummary {
  readonly samples: number
  readonly mainSamples: number
  /** Share of the process's samples on its main thread (the rest: GC helpers, the compiler, libuv's pool). */
  readonly mainPct: number
  /** Main thread: where it ran (areaOfSample). */
  readonly byArea: ReadonlyArray<{ readonly where: string; readonly pct: number }>
  /** Main thread: by the innermost frame of ours on the stack (what our code led to, its callees included). */
  readonly byProjectFrame: ReadonlyArray<{ readonly where: string; readonly pct: number }>
}

const ranked = (counts: Map<string, number>, total: number, top: number) =>
  [...counts].sort((a, b) => b[1] - a[1]).slice(0, top).map(([where, n]) => ({ where, pct: Math.round((1000 * n) / Math.max(1, total)) / 10 }))

/** The process's samples summarised for its main thread (`mainTid`: the process id). */
export const summariseOnCpu = (samples: ReadonlyArray<PerfSample>, mainTid: number, top = 25): OnCpuSummary => {
  const main = samples.filter((s) => s.tid === mainTid)
  const byArea = new Map<string, number>()
  const byProject = new Map<string, number>()
  for (const s of main) {
    const inner = s.frames[0]
    if (inner === undefined) continue
    const area = areaOfSample(s)
    byArea.set(area, (byArea.get(area) ?? 0) + 1)
    const ours = s.frames.map((f) => projectFile(f.sym)).find((p) => p !== undefined) ?? "(no frame of ours on the stack)"
    byProject.set(ours, (byProject.get(ours) ?? 0) + 1)
  }
  return {
    samples: samples.length,
    mainSamples: main.length,
    mainPct: Math.round((1000 * main.length) / Math.max(1, samples.length)) / 10,
    byArea: ranked(byArea, main.length, top),
    byProjectFrame: ranked(byProject, main.length, top)
  }
}
