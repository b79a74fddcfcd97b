// OpenAPI post-processing every service applies, so its document says only what is true.
import { OpenApi } from "@effect/platform"
import { Context } from "effect"

type Spec = Record<string, any>

/**
 * HttpApi documents its built-in HttpApiDecodeError on every route, but each listener maps a
 * decode failure to its own documented error (src/platform/http/Listener.ts): drop it from the
 * responses and the components.
 */
export const withoutBuiltInDecodeError = (spec: Spec): Spec => {
  const ref = "#/components/schemas/HttpApiDecodeError"
  const json = JSON.parse(JSON.stringify(spec)) as { paths?: Record<string, unknown>; components: { schemas: Record<string, unknown> } }
  for (const item of Object.values(json.paths ?? {})) {
    for (const op of Object.values(item as Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }> }>)) {
      for (const response of Object.values(op.responses ?? {})) {
        for (const media of Object.values(response.content ?? {})) {
          const schema = media.schema as { anyOf?: Array<{ $ref?: string }>; $ref?: string } | undefined
          if (schema?.anyOf) {
            const rest = schema.anyOf.filter((s) => s.$ref !== ref)
            media.schema = rest.length === 1 ? rest[0]! : { anyOf: rest }
          }
        }
      }
    }
  }
  delete json.components.schemas["HttpApiDecodeError"]
  delete json.components.schemas["Issue"]
  delete json.components.schemas["PropertyKey"]
  return json
}

/**
 * The document-level annotations every service's API carries: its title and description, version
 * 1.0.0 (the specs' interface version), a `servers` entry for the listener, and the tidying above.
 * Used as `HttpApi.make(…).annotateContext(apiDocumentation({…}))`.
 */
export const apiDocumentation = (doc: { readonly title: string; readonly server: string; readonly description: string }) =>
  Context.empty().pipe(
    Context.add(OpenApi.Title, doc.title),
    Context.add(OpenApi.Version, "1.0.0"),
    Context.add(OpenApi.Transform, withoutBuiltInDecodeError),
    Context.add(OpenApi.Servers, [{ url: "/", description: doc.server }]),
    Context.add(OpenApi.Description, doc.description)
  )
