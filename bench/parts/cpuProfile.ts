// Summarises a V8 .cpuprofile (node --cpu-prof, or the inspector's Profiler.stop): self time by
// function and by where the code lives (our src/, a package in node_modules, Node's own
// internals, GC and idle), so a bench can say where a server's CPU went.

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}
export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface ProfileRow {
  readonly [key: string]: string | number
  readonly where: string
  readonly selfMs: number
  readonly pct: number
}

/** Which part of the program a frame belongs to. */
export const areaOf = (f: CallFrame): string => {
  if (f.functionName === "(garbage collector)") return "(gc)"
  if (f.functionName === "(idle)") return "(idle)"
  if (f.functionName === "(program)") return "(program: native, not attributed)"
  const url = f.url
  if (url === "") return `(native) ${f.functionName || "anonymous"}`
  if (url.startsWith("node:")) {
    // node:internal/... → the module family (net, http, streams, timers, ...)
    const path = url.slice(5).replace(/^internal\//, "")
    return `node:${path.split("/")[0]!.replace(/_.*$/, "")}`
  }
  const nm = url.lastIndexOf("/node_modules/")
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  const src = url.indexOf("/src/")
  if (src >= 0) return url.slice(src + 1).split("/").slice(0, 3).join("/")
  const other = url.split("/")
  return other.slice(-2).join("/")
}

/** Coarse groups of areas, for "where the time goes" in one table. */
export const groupOf = (area: string, functionName: string): string => {
  if (area === "(gc)" || area === "(idle)") return area
  // The inspector's own work when the profile is taken and stopped.
  if (area === "(native) dispatch") return "(profiler)"
  if (/makePrettyError|prettyErrors|prettyErrorMessage|^log|logger/i.test(functionName) || /Logger|logger/.test(area)) return "logging"
  if (area === "effect") return "effect runtime (fibers of every part below)"
  if (/^@effect\/(cluster|rpc)/.test(area)) return "cluster messaging (@effect/cluster, @effect/rpc)"
  if (/^(pg|pg-protocol|pg-types|@effect\/sql|@effect\/sql-pg|postgres-)/.test(area)) return "SQL client (pg, @effect/sql)"
  if (/^@effect\/platform|^find-my-way|^src\/platform\/http|^node:(http|_http|net|stream|streams|internal\/http)|^\(native\) (writev|writeBuffer|writeUtf8String|writeLatin1String)|^node:events/.test(area)) return "HTTP (node:http, edge, HttpApi)"
  if (/^src\/exchange\/auth|^src\/crypto|^@noble|^node:crypto|^\(native\) (update|digest|createHmac|timingSafeEqual)/.test(area)) return "signature (HMAC, key lookup)"
  if (/^src\/exchange\/(market|book|ladder|events|filters|intmap|units)/.test(area)) return "market (book, state, amounts)"
  if (/^src\//.test(area)) return "other src/"
  return "other (node internals, native)"
}

export const summarise = (profile: CpuProfile, top = 25): { byArea: Array<ProfileRow>; byFunction: Array<ProfileRow>; byGroup: Array<ProfileRow>; totalMs: number } => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0)
  const area = new Map<string, number>()
  const fn = new Map<string, number>()
  const group = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame
    const a = areaOf(f)
    area.set(a, (area.get(a) ?? 0) + us)
    const g = groupOf(a, f.functionName)
    group.set(g, (group.get(g) ?? 0) + us)
    const file = f.url === "" ? "" : ` ${f.url.replace(/^.*\/(node_modules|src)\//, "$1/").replace(/^file:\/\//, "")}:${f.lineNumber + 1}`
    const name = `${f.functionName || "(anonymous)"}${file}`
    fn.set(name, (fn.get(name) ?? 0) + us)
  }
  const rows = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([where, us]) => ({ where, selfMs: Math.round(us / 1000), pct: Number(((100 * us) / total).toFixed(1)) }))
  return { byArea: rows(area), byFunction: rows(fn), byGroup: rows(group), totalMs: Math.round(total / 1000) }
}
