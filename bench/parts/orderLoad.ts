// The order load of `npm run bench -- orders`, one client for every target (the node and the
// least-work reference), so the two are measured with exactly the same requests: `clients` keep-alive
// connections, each a user sending signed LIMIT orders; a share `crossPct` crosses the makers at the
// touch (BUY 100.00 / SELL 99.00, 0.05) and fills, the rest rest off the touch and are cancelled
// once a client has more than `depth` resting. What happens in the measured window is recorded.
import { Agent, request } from "node:http"
import { signedQuery, type Key } from "../../harness/signed.ts"

const prefix = "/api/public/v1"

export interface Answer {
  readonly status: number
  readonly body: string
}

export const call = (agent: Agent, url: URL, method: "POST" | "DELETE" | "GET", path: string, key: Key) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, agent, headers: { "X-MBX-APIKEY": key.apiKey, ...(method === "POST" ? { "content-length": "0" } : {}) } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

export const signedPath = (path: string, key: Key, params: Record<string, string | number>) => `${prefix}${path}?${signedQuery(key, params)}`

export type Kind = "rest" | "cross" | "cancel"

export interface LoadFigures {
  readonly latencies: Record<Kind, Array<number>>
  readonly counts: Record<Kind, number>
  /** "kind status code" → count. */
  readonly errors: Map<string, number>
  /** Orders acknowledged per second of the window. */
  readonly perSecond: Array<number>
}

export interface LoadPlan {
  readonly url: URL
  readonly users: ReadonlyArray<Key>
  readonly symbolOf: (client: number) => string
  readonly crossPct: number
  readonly depth: number
  readonly warmupMs: number
  readonly durationMs: number
  /** Called when the measured window opens and when it closes (the caller reads its counters). */
  readonly window: { readonly open: () => Promise<void>; readonly close: () => Promise<void> }
}

const tick = (n: number) => (n / 100).toFixed(2)

/** Runs the load for warmup + duration and records what answered inside the window. */
export const driveLoad = async (plan: LoadPlan): Promise<LoadFigures> => {
  const { url, users, symbolOf, crossPct, depth, warmupMs, durationMs } = plan
  const agent = new Agent({ keepAlive: true, maxSockets: users.length })
  const latencies: Record<Kind, Array<number>> = { rest: [], cross: [], cancel: [] }
  const counts: Record<Kind, number> = { rest: 0, cross: 0, cancel: 0 }
  const errors = new Map<string, number>()
  const perSecond: Array<number> = []
  let measureStart = Infinity
  let measureEnd = Infinity
  const stopAt = performance.now() + warmupMs + durationMs
  const record = (kind: Kind, t0: number, t1: number, a: Answer | undefined) => {
    if (t0 < measureStart || t1 > measureEnd) return
    if (a === undefined || a.status !== 200) {
      let code = "network"
      if (a !== undefined) {
        try {
          code = `${a.status} ${(JSON.parse(a.body) as { code?: number }).code ?? "?"}`
        } catch {
          code = `${a.status}`
        }
      }
      errors.set(`${kind} ${code}`, (errors.get(`${kind} ${code}`) ?? 0) + 1)
      return
    }
    counts[kind]++
    latencies[kind].push(t1 - t0)
    if (kind !== "cancel") {
      const s = Math.floor((t1 - measureStart) / 1000)
      perSecond[s] = (perSecond[s] ?? 0) + 1
    }
  }
  const client = async (i: number) => {
    const key = users[i]!
    const symbol = symbolOf(i)
    const resting: Array<string> = []
    const rnd = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1))
    while (performance.now() < stopAt) {
      while (resting.length > depth && performance.now() < stopAt) {
        const orderId = resting.shift()!
        const t0 = performance.now()
        const a = await call(agent, url, "DELETE", signedPath("/order", key, { symbol, orderId }), key).catch(() => undefined)
        record("cancel", t0, performance.now(), a)
      }
      const crossing = Math.random() * 100 < crossPct
      const side = Math.random() < 0.5 ? "BUY" : "SELL"
      const price = crossing ? (side === "BUY" ? "100.00" : "99.00") : side === "BUY" ? tick(rnd(9000, 9899)) : tick(rnd(10001, 10999))
      const quantity = crossing ? "0.05" : tick(rnd(5, 100))
      const t0 = performance.now()
      const a = await call(agent, url, "POST", signedPath("/order", key, { symbol, side, type: "LIMIT", timeInForce: "GTC", price, quantity }), key).catch(() => undefined)
      record(crossing ? "cross" : "rest", t0, performance.now(), a)
      if (!crossing && a?.status === 200) resting.push((JSON.parse(a.body) as { orderId: string }).orderId)
    }
  }
  const workers = Promise.all(users.map((_, i) => client(i)))
  await new Promise((r) => setTimeout(r, warmupMs))
  await plan.window.open()
  measureStart = performance.now()
  measureEnd = measureStart + durationMs
  await new Promise((r) => setTimeout(r, durationMs))
  await plan.window.close()
  await workers
  agent.destroy()
  return { latencies, counts, errors, perSecond }
}
