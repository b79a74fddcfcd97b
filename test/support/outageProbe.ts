// What a client sees of a node while its database is away: the status of every /ping and /time,
// and how many /ops answers said the database is down. Polled until stop().
export interface OutageSeen {
  readonly ping: Set<number>
  readonly time: Set<number>
  opsDown: number
}

/** `baseUrl` is the exchange listener's root (http://127.0.0.1:port). Keep everyMs within the node's per-IP budget. */
export const probeDuringOutage = (baseUrl: string, everyMs = 250) => {
  const seen: OutageSeen = { ping: new Set(), time: new Set(), opsDown: 0 }
  const get = (path: string) => fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined)
  const status = (path: string) => get(path).then((r) => r?.status ?? 0)
  let running = true
  const loop = (async () => {
    while (running) {
      const [p, t] = await Promise.all([status("/api/public/v1/ping"), status("/api/public/v1/time")])
      seen.ping.add(p)
      seen.time.add(t)
      const ops = await get("/ops")
      if (ops?.status === 503 && ((await ops.json()) as { database?: string }).database === "down") seen.opsDown++
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
