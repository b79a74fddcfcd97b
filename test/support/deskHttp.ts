// Calls to a node's desk listener as a partner makes them: JSON in (or raw text, for malformed
// bodies), the status and the parsed body out; and the count of desk orders, for "nothing created".
import type { TestDatabase } from "../../harness/db.ts"

export interface DeskAnswer {
  readonly status: number
  readonly body: any
}

/** `call(method, path under /api/public/v1, apiKey?, body?, headers?)`; a string body is sent as it is. */
export const deskCaller = (deskUrl: () => string) =>
  async (method: string, path: string, apiKey: string | undefined, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<DeskAnswer> => {
    const headers: Record<string, string> = { "content-type": "application/json", ...extraHeaders }
    if (apiKey !== undefined) headers["x-api-key"] = apiKey
    const r = await fetch(`${deskUrl()}/api/public/v1${path}`, {
      method, headers, ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
    const text = await r.text()
    return { status: r.status, body: text === "" ? undefined : JSON.parse(text) }
  }

export const deskOrderCount = async (db: TestDatabase): Promise<number> =>
  Number((await db.query<{ n: string }>("SELECT count(*)::text AS n FROM desk_orders"))[0]!.n)
