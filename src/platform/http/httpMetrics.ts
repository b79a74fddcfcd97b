// HTTP request metrics, labelled by service, method, route and status. Effect.tagMetrics would build
// a labelled key and look it up in the registry on every request (measured: a fifth of /time's
// throughput), so one labelled pair is built per label set and kept. The set is bounded: routes are
// declared paths or "other", methods are the ones node:http accepts.
import { Metric, MetricKey, MetricLabel } from "effect"
import { httpLatencyKey, httpRequestsKey } from "../Metrics.ts"

interface Pair {
  readonly requests: Metric.Metric.Counter<number>
  readonly latency: Metric.Metric.Histogram<number>
}

const pairs = new Map<string, Pair>()

const pairOf = (service: string, method: string, route: string, status: number): Pair => {
  const id = `${service} ${method} ${route} ${status}`
  let pair = pairs.get(id)
  if (pair === undefined) {
    const labels = [
      MetricLabel.make("method", method),
      MetricLabel.make("route", route),
      MetricLabel.make("status", String(status)),
      MetricLabel.make("service", service)
    ]
    pair = {
      requests: Metric.fromMetricKey(MetricKey.taggedWithLabels(httpRequestsKey, labels)),
      latency: Metric.fromMetricKey(MetricKey.taggedWithLabels(httpLatencyKey, labels))
    }
    pairs.set(id, pair)
  }
  return pair
}

/** Requests answered per listener since the node started, and how many were 4xx and 5xx (for /ops). */
export interface ListenerTotals {
  requests: number
  clientErrors: number
  serverErrors: number
}

const totals = new Map<string, ListenerTotals>()

/** A copy of this node's per-listener totals. */
export const listenerTotals = (): Record<string, ListenerTotals> =>
  Object.fromEntries([...totals].map(([service, t]) => [service, { ...t }]))

/** Records one answered request; synchronous, so the node:http fast lane and the Effect path share it. */
export const recordRequest = (service: string, method: string, route: string, status: number, elapsedMs: number): void => {
  const pair = pairOf(service, method, route, status)
  pair.requests.unsafeUpdate(1, [])
  pair.latency.unsafeUpdate(elapsedMs, [])
  let t = totals.get(service)
  if (t === undefined) totals.set(service, (t = { requests: 0, clientErrors: 0, serverErrors: 0 }))
  t.requests++
  if (status >= 500) t.serverErrors++
  else if (status >= 400) t.clientErrors++
}
