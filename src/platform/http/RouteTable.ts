// What each route costs and what it is called in metrics, read once from the HttpApi's own
// endpoint annotations, so a route's weight is declared where the route is. Lookup is a map hit
// for static paths and a short scan of the few parameterised ones; unknown paths cost 1, so
// probing for paths is rate limited too.
import { HttpApi } from "@effect/platform"
import { Context, Option } from "effect"
import { FairUse, Weight } from "../../../schemas/common/Weight.ts"

export interface RouteInfo {
  /** The route's path as declared (`/orders/:id`): a bounded metrics label. */
  readonly label: string
  readonly weight: number
  /** Charged to the listener's fair-use budget (FairUse annotation), not its per-IP budget. */
  readonly fairUse?: boolean
}

export interface RouteTable {
  readonly lookup: (method: string, path: string) => RouteInfo | undefined
}

export interface ExtraRoute {
  readonly method: string
  readonly path: string
  readonly weight: number
  readonly fairUse?: boolean
}

const unknownWeight = 1

interface Pattern {
  readonly method: string
  readonly segments: ReadonlyArray<string>
  readonly info: RouteInfo
}

/** Pure: builds the table from (method, path, weight) rows; `:name` segments match one segment. */
export const makeRouteTable = (rows: ReadonlyArray<ExtraRoute>): RouteTable => {
  const exact = new Map<string, RouteInfo>()
  const patterns: Array<Pattern> = []
  for (const row of rows) {
    const info: RouteInfo = { label: row.path, weight: row.weight, ...(row.fairUse === true ? { fairUse: true } : {}) }
    if (row.path.includes("/:")) patterns.push({ method: row.method, segments: row.path.split("/"), info })
    else exact.set(`${row.method} ${row.path}`, info)
  }
  return {
    lookup: (method, path) => {
      const hit = exact.get(`${method} ${path}`)
      if (hit !== undefined || patterns.length === 0) return hit
      const segments = path.split("/")
      return patterns.find((p) =>
        p.method === method && p.segments.length === segments.length &&
        p.segments.every((s, i) => s.startsWith(":") ? segments[i] !== "" : s === segments[i])
      )?.info
    }
  }
}

/** The rows of an HttpApi: every endpoint with its Weight annotation (or 1) and its FairUse one. */
export const routesOf = (api: HttpApi.HttpApi.Any): ReadonlyArray<ExtraRoute> => {
  const rows: Array<ExtraRoute> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      rows.push({
        method: endpoint.method,
        path: endpoint.path,
        weight: Option.getOrElse(Context.getOption(mergedAnnotations, Weight), () => unknownWeight),
        ...(Option.isSome(Context.getOption(mergedAnnotations, FairUse)) ? { fairUse: true } : {})
      })
    }
  })
  return rows
}

export const costOfUnknown: RouteInfo = { label: "other", weight: unknownWeight }

/** Where every listener serves its OpenAPI document and docs page, and what they cost (the page is
 * 1.9 MB); both are cached pages of the edge. */
export const docsRoutes = [
  { method: "GET", path: "/openapi.json", weight: 5 },
  { method: "GET", path: "/api-docs", weight: 20 }
] as const
