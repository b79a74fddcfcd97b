// The live page's feed (issue 26): every node reads the ops view every 2 s, keeps 15 minutes of
// samples in memory (opsHistory.ts), and streams them to open pages as Server-Sent Events at
// GET /ops/stream: `history` (the samples a page lacks: all, or those after its Last-Event-ID),
// then `view` and `sample` at each read. Served by the node:http edge (a stream outlives any
// request pipeline), under the same SHARDLINE_OPS_TOKEN rule (bearer or the page's cookie) and
// redaction as GET /ops.
import type { IncomingMessage, ServerResponse } from "node:http"
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { AppConfig } from "../Config.ts"
import { checkOpsAccess } from "../http/opsAccess.ts"
import type { Reply, StreamRoute } from "../http/ServiceEdge.ts"
import { appendSample, type Sample, sampleIntervalMs, sampleOf, samplesAfter, type Totals } from "./opsHistory.ts"
import { InboundWebhooks } from "./InboundWebhooks.ts"
import { type OpsView, readOpsView } from "./OpsView.ts"
import { publicOpsView, type PublicOpsView } from "./publicView.ts"

/** A page's stream ends after this long (EventSource reconnects and resumes from its last sample). */
export const streamLifetimeMs = 10 * 60_000
/** Bytes a page may leave unread in its socket before it is cut off. */
export const streamBufferBytes = 1024 * 1024

export interface OpsFeedShape {
  /** The SSE route; `refused` answers a missing or wrong token in the listener's shape. */
  readonly stream: (refused: (reason: "missing" | "wrong") => Reply & { readonly headers?: Record<string, string> }) => StreamRoute
  /** Ends every open stream (the listener is closing). */
  readonly closeAll: () => void
  readonly history: () => ReadonlyArray<Sample>
}

export class OpsFeed extends Context.Tag("shardline/OpsFeed")<OpsFeed, OpsFeedShape>() {}

const event = (name: string, data: unknown, id?: number) => `${id === undefined ? "" : `id: ${id}\n`}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`

export const layer = Layer.scoped(OpsFeed, Effect.gen(function*() {
  const config = yield* AppConfig
  const sql = yield* SqlClient.SqlClient
  const webhooks = yield* InboundWebhooks
  const token = Option.getOrUndefined(Option.map(config.opsToken, Redacted.value))
  const pages = new Set<ServerResponse>()
  let history: ReadonlyArray<Sample> = []
  let previous: { readonly at: number; readonly totals: Totals } | undefined
  let latest: OpsView | PublicOpsView | undefined
  let seq = 0

  const send = (res: ServerResponse, text: string) => {
    if (res.writableLength > streamBufferBytes) return res.destroy()
    res.write(text)
  }
  const read = Effect.gen(function*() {
    const view = yield* readOpsView
    const at = Date.now()
    const next = sampleOf(++seq, at, view, previous)
    previous = { at, totals: next.totals }
    history = appendSample(history, next.sample)
    latest = token === undefined ? publicOpsView(view) : view
    const text = event("view", latest) + event("sample", next.sample, next.sample.seq)
    for (const res of pages) send(res, text)
  }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(AppConfig, config), Effect.provideService(InboundWebhooks, webhooks), Effect.timeout(Duration.millis(sampleIntervalMs * 2)), Effect.ignore)
  yield* read.pipe(Effect.repeat(Schedule.spaced(Duration.millis(sampleIntervalMs))), Effect.forkScoped)

  const closeAll = () => {
    for (const res of pages) res.end()
    pages.clear()
  }
  yield* Effect.addFinalizer(() => Effect.sync(closeAll))

  const stream: OpsFeedShape["stream"] = (refused) => (req: IncomingMessage, res: ServerResponse, _query: string, headers: Record<string, string>) => {
    // The page's cookie counts here (the stream is the page's): /ops?token=… set it (OpsRoutes.ts).
    const access = checkOpsAccess(token, req.headers.authorization, req.headers.cookie)
    if (!access.allowed) {
      const r = refused(access.reason)
      res.writeHead(r.status, { ...headers, ...r.headers, "content-type": "application/json" }).end(r.body)
      return
    }
    const lastId = Number(req.headers["last-event-id"])
    res.writeHead(200, { ...headers, "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" })
    res.write(`retry: 2000\n\n`)
    res.write(event("history", samplesAfter(history, Number.isSafeInteger(lastId) ? lastId : undefined)))
    if (latest !== undefined) res.write(event("view", latest))
    pages.add(res)
    const lifetime = setTimeout(() => res.end(), streamLifetimeMs)
    res.on("close", () => {
      clearTimeout(lifetime)
      pages.delete(res)
    })
  }
  return OpsFeed.of({ stream, closeAll, history: () => history })
}))
