// What the fuzzer aims at: every operation of a listener's own OpenAPI document (method, path
// template, path and query parameters, JSON body schema, how it authenticates), plus the routes a
// listener serves outside it (documents, ops, metrics, the web app), and which answers are
// documented as something other than JSON.

export type Service = "exchange" | "desk" | "social"

/** A JSON Schema as the OpenAPI documents carry it (refs resolved on use). */
export type JsonSchema = { readonly [key: string]: unknown }

export interface Param {
  readonly name: string
  readonly required: boolean
  readonly schema: JsonSchema
}

export type Auth = "none" | "signed" | "session" | "deskKey" | "webhook"

export interface Operation {
  readonly service: Service
  readonly method: string
  /** As documented, `{name}` for path parameters. */
  readonly path: string
  readonly pathParams: ReadonlyArray<Param>
  readonly queryParams: ReadonlyArray<Param>
  /** The JSON body's schema, if it takes one. */
  readonly body: JsonSchema | undefined
  /** A raw body of its own Content-Type (uploads). */
  readonly rawBody: boolean
  readonly auth: Auth
}

export interface ServiceDocument {
  readonly service: Service
  readonly operations: ReadonlyArray<Operation>
  /** Resolves a `#/components/schemas/X` reference of this document. */
  readonly resolve: (schema: JsonSchema) => JsonSchema
}

interface OpenApiOperation {
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly required?: boolean; readonly schema?: JsonSchema }>
  readonly requestBody?: { readonly content?: Readonly<Record<string, { readonly schema?: JsonSchema }>> }
  readonly security?: ReadonlyArray<Readonly<Record<string, unknown>>>
}

interface OpenApiDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, OpenApiOperation>>>>
  readonly components?: { readonly schemas?: Readonly<Record<string, JsonSchema>> }
}

const methods = new Set(["get", "post", "put", "delete", "patch", "head", "options"])

const authOf = (service: Service, path: string, op: OpenApiOperation): Auth => {
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s))
  if (path.includes("/webhooks/")) return "webhook"
  if (schemes.length === 0) return "none"
  if (service === "exchange" && (op.parameters ?? []).some((p) => p.name === "signature")) return "signed"
  if (service === "desk") return "deskKey"
  return "session"
}

/** The operations of one listener's OpenAPI document (an object as served at /openapi.json). */
export const operationsOf = (service: Service, doc: unknown): ServiceDocument => {
  const d = doc as OpenApiDocument
  const schemas = d.components?.schemas ?? {}
  const resolve = (schema: JsonSchema): JsonSchema => {
    let s = schema
    for (let i = 0; i < 8 && typeof s["$ref"] === "string"; i++) {
      const name = (s["$ref"] as string).split("/").pop()!
      s = schemas[name] ?? {}
    }
    return s
  }
  const operations: Array<Operation> = []
  for (const [path, ops] of Object.entries(d.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!methods.has(method)) continue
      const params = op.parameters ?? []
      const toParam = (p: (typeof params)[number]): Param => ({ name: p.name, required: p.required === true, schema: p.schema ?? {} })
      const json = op.requestBody?.content?.["application/json"]?.schema
      operations.push({
        service, method: method.toUpperCase(), path,
        pathParams: params.filter((p) => p.in === "path").map(toParam),
        queryParams: params.filter((p) => p.in === "query").map(toParam),
        body: json,
        rawBody: service === "social" && path === "/api/social/upload",
        auth: authOf(service, path, op)
      })
    }
  }
  // Routes each listener serves beside its API document (INTERFACES.md: /openapi.json, /api-docs
  // everywhere; /metrics and /ops on the exchange; the web app on every listener).
  const extra = (path: string, auth: Auth = "none"): Operation =>
    ({ service, method: "GET", path, pathParams: [], queryParams: [], body: undefined, rawBody: false, auth })
  operations.push(extra("/openapi.json"), extra("/api-docs"), extra("/app/"), extra("/app/sign-in"), extra("/app/app.js"), extra("/app/app.css"), extra("/favicon.ico"))
  if (service === "exchange") {
    operations.push(extra("/api/public/v1/openapi.json"), extra("/metrics"), extra("/ops"), extra("/ops/stream"), extra("/ops/app.js"), extra("/ops/app.css"))
  }
  return { service, operations, resolve }
}

/**
 * Routes (documented paths) whose success is documented as something other than JSON (pages,
 * scripts, media, metrics text, event streams). Their errors are still JSON in the service's shape.
 */
export const nonJsonSuccess = (service: Service, template: string): boolean => {
  if (template === "/api-docs" || template.startsWith("/app/") || template === "/favicon.ico") return true
  if (service === "exchange") return template === "/metrics" || template.startsWith("/ops") || template === "/api/public/v1/stream"
  if (service === "social") return template.startsWith("/api/stream/") || template.startsWith("/p/") || template.startsWith("/embed/")
  return false
}
