// /metrics of a node that runs several runner processes (SHARDLINE_PROCESSES > 1,
// cluster/Primary.ts). A scrape reaches whichever process the primary handed the connection to,
// and a Prometheus target whose series came from a different process at each scrape would see
// counters jump and series go stale. So the process that takes the scrape asks the primary for
// every process's registry (over node:cluster IPC) and answers them all, each sample labelled
// `process="<index>"`: one target, one series per process, as with separate nodes. A process
// that does not answer within `gatherTimeoutMs` is left out of that scrape; with no primary to
// ask (one process), the process's own registry is the answer, without the label.
import cluster from "node:cluster"
import { render } from "./prometheus.ts"

/** The environment variable that gives a worker its index (0-based) among its node's processes. */
export const processIndexVar = "SHARDLINE_PROCESS_INDEX"
/** How long the process that took a scrape waits for the others (ms). */
export const gatherTimeoutMs = 1_000

/** IPC message types between a worker and its primary. */
export const metricsMessages = {
  /** worker → primary: a scrape came in; answer with every process's text. */
  request: "shardline:metrics-request",
  /** primary → worker: render your registry. */
  render: "shardline:metrics-render",
  /** worker → primary: the rendered, labelled text. */
  rendered: "shardline:metrics-rendered",
  /** primary → worker: every process's text, merged. */
  merged: "shardline:metrics-merged"
} as const

export interface MetricsMessage {
  readonly type: (typeof metricsMessages)[keyof typeof metricsMessages]
  readonly id: number
  readonly text?: string
}

export const isMetricsMessage = (m: unknown): m is MetricsMessage =>
  typeof m === "object" && m !== null && Object.values(metricsMessages).includes((m as { type?: unknown }).type as never) &&
  typeof (m as { id?: unknown }).id === "number"

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?( .*)$/

/** Adds `process="<index>"` to every sample line of a text exposition. */
export const labelSamples = (text: string, index: number): string =>
  text.split("\n").map((line) => {
    const m = line.startsWith("#") ? null : SAMPLE.exec(line)
    if (m === null) return line
    const [, name, inner, value] = m
    return `${name}{process="${index}"${inner === undefined || inner === "" ? "" : `,${inner}`}}${value}`
  }).join("\n")

/** One exposition of several: each family's HELP and TYPE once, then every text's samples of it. */
export const mergeExpositions = (texts: ReadonlyArray<string>): string => {
  const families = new Map<string, { help?: string; type?: string; samples: Array<string> }>()
  const family = (name: string) => {
    let f = families.get(name)
    if (f === undefined) families.set(name, (f = { samples: [] }))
    return f
  }
  for (const text of texts) {
    let current: string | undefined
    for (const line of text.split("\n")) {
      if (line === "") continue
      const meta = /^# (HELP|TYPE) (\S+)/.exec(line)
      if (meta !== null) {
        current = meta[2]!
        const f = family(current)
        if (meta[1] === "HELP") f.help ??= line
        else f.type ??= line
        continue
      }
      if (line.startsWith("#")) continue
      // A sample belongs to the family whose TYPE came last (histogram _bucket/_sum/_count included).
      family(current ?? SAMPLE.exec(line)?.[1] ?? line).samples.push(line)
    }
  }
  const out: Array<string> = []
  for (const [, f] of [...families.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    if (f.help !== undefined) out.push(f.help)
    if (f.type !== undefined) out.push(f.type)
    out.push(...f.samples)
  }
  return out.join("\n") + "\n"
}

const processIndex = () => Number(process.env[processIndexVar] ?? 0)

/** Whether this process is one of several behind its node's ports (a worker with a primary to ask). */
const inGroup = () => cluster.isWorker && process.send !== undefined && process.env[processIndexVar] !== undefined

const waiting = new Map<number, (text: string) => void>()
let nextId = 1
let answering = false

/** In a worker: answer the primary's render requests and take its merged answers. Once per process. */
export const answerMetricsRequests = () => {
  if (answering || !inGroup()) return
  answering = true
  process.on("message", (m: unknown) => {
    if (!isMetricsMessage(m)) return
    if (m.type === metricsMessages.render) {
      process.send?.({ type: metricsMessages.rendered, id: m.id, text: labelSamples(render(), processIndex()) } satisfies MetricsMessage)
    } else if (m.type === metricsMessages.merged && m.text !== undefined) {
      waiting.get(m.id)?.(m.text)
    }
  })
}

/** The text /metrics answers: this process's registry, or every process's of the node. */
export const nodeMetricsText = (): Promise<string> => {
  if (!answering) return Promise.resolve(render())
  const id = nextId++
  return new Promise((resolve) => {
    const done = (text: string) => {
      clearTimeout(timer)
      waiting.delete(id)
      resolve(text)
    }
    // No primary answer (it is stopping, say): this process's own, still labelled.
    const timer = setTimeout(() => done(labelSamples(render(), processIndex())), gatherTimeoutMs * 2)
    waiting.set(id, done)
    process.send?.({ type: metricsMessages.request, id } satisfies MetricsMessage)
  })
}
