// The closed-loop HTTP load generator the HTTP benches share: N keep-alive workers for a fixed
// time after a warmup, latency percentiles, and the server process's CPU per request from /proc.
import { Agent, request, type OutgoingHttpHeaders } from "node:http"
import { readFileSync } from "node:fs"

/** Latency samples kept per case; beyond it requests are counted but not sampled. */
const samplesMax = 2_000_000
const ticksPerSecond = 100

/** User + system CPU of a process so far, ms (Linux /proc); NaN elsewhere. */
export const cpuMs = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond
  } catch {
    return NaN
  }
}

export interface Target {
  readonly baseUrl: string
  /** The server's process, for CPU per request. */
  readonly pid: number
  /** Called per request: the path with query, and the headers (a signed call signs afresh). */
  readonly next: () => { path: string; headers: OutgoingHttpHeaders }
}

export interface Measured {
  readonly requests: number
  readonly errors: number
  readonly rps: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly cpuUsPerRequest: number
  /** Response body bytes read per second. */
  readonly bytesPerSec: number
}

export interface LoadOptions {
  readonly concurrency: number
  readonly durationMs: number
  readonly warmupMs: number
  /** The status a request must answer to count as a success (200 unless told). */
  readonly okStatus?: number
}

const get = (agent: Agent, url: URL, path: string, headers: OutgoingHttpHeaders) =>
  new Promise<{ status: number; bytes: number }>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers, agent }, (res) => {
      let bytes = 0
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

/** N keep-alive workers in a closed loop for a fixed time; warmup requests are not recorded. */
export const load = async (target: Target, options: LoadOptions): Promise<Measured> => {
  const { concurrency, durationMs, warmupMs } = options
  const ok = options.okStatus ?? 200
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const url = new URL(target.baseUrl)
  const latencies: Array<number> = []
  let requests = 0
  let errors = 0
  let bytes = 0
  const worker = async (until: number, record: boolean) => {
    while (Date.now() < until) {
      const { path, headers } = target.next()
      const t0 = performance.now()
      const answer = await get(agent, url, path, headers).catch(() => ({ status: 0, bytes: 0 }))
      const ms = performance.now() - t0
      if (!record) continue
      requests++
      bytes += answer.bytes
      if (answer.status !== ok) errors++
      if (latencies.length < samplesMax) latencies.push(ms)
    }
  }
  const run = (ms: number, record: boolean) => {
    const until = Date.now() + ms
    return Promise.all(Array.from({ length: concurrency }, () => worker(until, record)))
  }
  await run(warmupMs, false)
  const start = performance.now()
  const cpu0 = cpuMs(target.pid)
  await run(durationMs, true)
  const cpu1 = cpuMs(target.pid)
  const elapsed = performance.now() - start
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN
  return {
    requests, errors, rps: requests / (elapsed / 1000), p50Ms: pct(0.5), p99Ms: pct(0.99),
    cpuUsPerRequest: ((cpu1 - cpu0) * 1000) / Math.max(1, requests), bytesPerSec: bytes / (elapsed / 1000)
  }
}
