// What a client sees of a node while its database is away: the status of every /ping and /time,
// and how many /ops answers said the database is down. Polled until stop().
//
// Paced to stay inside the node's per-IP weight budget (the exchange's default, 1,200 a minute):
// /ping and /time weigh 1 each, /ops what the edge's route table says (20). Polling all three
// every 250 ms spends ~80 a second and met a 429 after ~15 s in CI once the node answered quickly,
// which is the limiter doing its job, not the outage. So /ping and /time go every `everyMs`,
// /ops every `opsEveryMs`.
import { defaults } from "../../src/exchange/ExchangeConfig.ts"
import { exchangeExtraRoutes } from "../../src/exchange/http/ExchangeEdge.ts"

export interface OutageSeen {
  readonly ping: Set<number>
  readonly time: Set<number>
  opsDown: number
}

const IP_WEIGHT_PER_SECOND = defaults.rateLimitIpWeightPerMin / 60
const OPS_WEIGHT = exchangeExtraRoutes.find((r) => r.path === "/ops")!.weight

/** `baseUrl` is the exchange listener's root (http://127.0.0.1:port). */
export const probeDuringOutage = (baseUrl: string, everyMs = 250, opsEveryMs = 3_000) => {
  // Worst case (every answer instant): 2 weight per everyMs plus /ops's per opsEveryMs, with a
  // quarter of the budget kept for the test's own requests.
  const spend = (2 * 1_000) / everyMs + (OPS_WEIGHT * 1_000) / opsEveryMs
  if (spend > IP_WEIGHT_PER_SECOND * 0.75) throw new Error(`outage probe would spend ${spend} weight/s, over the node's per-IP budget`)
  const seen: OutageSeen = { ping: new Set(), time: new Set(), opsDown: 0 }
  const get = (path: string) => fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined)
  const status = (path: string) => get(path).then((r) => r?.status ?? 0)
  let running = true
  let opsAt = 0
  const loop = (async () => {
    while (running) {
      const [p, t] = await Promise.all([status("/api/public/v1/ping"), status("/api/public/v1/time")])
      seen.ping.add(p)
      seen.time.add(t)
      if (Date.now() - opsAt >= opsEveryMs) {
        opsAt = Date.now()
        const ops = await get("/ops")
        if (ops?.status === 503 && ((await ops.json()) as { database?: string }).database === "down") seen.opsDown++
      }
      await new Promise((r) => setTimeout(r, everyMs))
    }
  })()
  return {
    seen,
    stop: async (): Promise<OutageSeen> => {
      running = false
      await loop
      return seen
    }
  }
}
