// The allocation summary the orders bench prints with BENCH_ORDERS_HEAP=1: a sampling heap profile
// of the node over the last mix's window (the inspector's HeapProfiler.startSampling with the
// objects collected by minor and major GC kept, so it counts what was allocated, not what
// survived), as bytes in all and the sites that allocated most, by their own bytes.
//
// Why bytes: on the shared 2-core box a run's CPU figures swing with the host by a quarter, and
// bytes allocated per order do not (session 27: 125–126 KB per order before a change, 110–112
// after, two runs each), and GC was 14–20 % of the node's CPU. A limit: tsx compiles each module to
// one line, so a site of ours reads `file.ts:1:<column>`, a column of tsx's output, not of the source.

/** The inspector's SamplingHeapProfile, as much of it as is read here. */
export interface HeapProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly selfSize: number
  readonly children?: ReadonlyArray<HeapProfileNode>
}
export interface HeapProfile {
  readonly head: HeapProfileNode
}

export interface HeapSummary {
  readonly bytes: number
  /** Sites by the bytes they allocated themselves, largest first: "name file:line:column". */
  readonly bySite: ReadonlyArray<{ readonly site: string; readonly bytes: number; readonly pct: number }>
}

/** A site's name: the function (or "(anonymous)") and where it is, the project's path made relative. */
export const siteOf = (f: HeapProfileNode["callFrame"], root = ""): string => {
  const url = root !== "" && f.url.startsWith(root) ? f.url.slice(root.length) : f.url
  return `${f.functionName === "" ? "(anonymous)" : f.functionName} ${url === "" ? "(native)" : `${url}:${f.lineNumber + 1}:${f.columnNumber + 1}`}`
}

/** Pure: the profile's total bytes and its `top` sites (a tree walked without recursion: profiles are deep). */
export const summariseHeap = (profile: HeapProfile, top = 20, root = ""): HeapSummary => {
  const bySite = new Map<string, number>()
  let bytes = 0
  const stack: Array<HeapProfileNode> = [profile.head]
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    if (n.selfSize > 0) {
      bytes += n.selfSize
      const site = siteOf(n.callFrame, root)
      bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize)
    }
    for (const c of n.children ?? []) stack.push(c)
  }
  const sites = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)
  return { bytes, bySite: sites.map(([site, b]) => ({ site, bytes: b, pct: bytes === 0 ? 0 : Math.round((1000 * b) / bytes) / 10 })) }
}
