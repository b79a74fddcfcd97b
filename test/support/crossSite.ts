// Cross-site writes on a web app's cookie session (issue 24 point 5, issue 27.2): every route of a
// service's API that changes state behind its session middleware is listed from the API itself (a
// route added later is covered without touching the tests), then sent as another site's page could
// send it: the session cookie with a foreign Origin, and the cookie from this origin with a
// text/plain body (a form or a no-cors fetch needs no preflight for it). Both must be refused.
import type { HttpApi } from "@effect/platform"

export interface SessionWrite {
  readonly method: string
  /** The path with each `:param` filled by a well-formed value (the refusal comes before any lookup). */
  readonly path: string
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])

/** A value every path parameter of our APIs accepts as well-formed (ids, asset codes, keys). */
const filler = "AAAAAAAAAAAAAAAAAAAAAA"

/** Every state-changing route of `api` behind `middleware` (the security tag, on its group or on the route). */
export const sessionWrites = (api: HttpApi.HttpApi.Any, middleware: object): ReadonlyArray<SessionWrite> => {
  const out: Array<SessionWrite> = []
  const groups = Object.values((api as unknown as { groups: Record<string, { middlewares: ReadonlySet<unknown>; endpoints: Record<string, { method: string; path: string; middlewares: ReadonlySet<unknown> }> }> }).groups)
  for (const group of groups) {
    for (const endpoint of Object.values(group.endpoints)) {
      if (safeMethods.has(endpoint.method)) continue
      if (!group.middlewares.has(middleware) && !endpoint.middlewares.has(middleware)) continue
      out.push({ method: endpoint.method, path: endpoint.path.replace(/:[A-Za-z]+/g, filler) })
    }
  }
  return out
}

export interface CrossSiteAnswer {
  readonly route: string
  readonly attempt: "foreign origin" | "text/plain body"
  readonly status: number
  readonly body: unknown
}

/** Sends each write twice as another site would, with `cookie`; the answers, for the caller to judge. */
export const crossSiteAttempts = async (baseUrl: string, writes: ReadonlyArray<SessionWrite>, cookie: string): Promise<ReadonlyArray<CrossSiteAnswer>> => {
  const attempts = [
    { attempt: "foreign origin" as const, headers: { origin: "http://evil.example", "content-type": "application/json" } },
    { attempt: "text/plain body" as const, headers: { origin: baseUrl, "content-type": "text/plain" } }
  ]
  const answers: Array<CrossSiteAnswer> = []
  for (const w of writes) {
    for (const a of attempts) {
      const r = await fetch(`${baseUrl}${w.path}`, { method: w.method, headers: { cookie, ...a.headers }, body: "{}" })
      const text = await r.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // Not JSON: kept as text so the failure shows it.
      }
      answers.push({ route: `${w.method} ${w.path}`, attempt: a.attempt, status: r.status, body })
    }
  }
  return answers
}
