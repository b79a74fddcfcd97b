// A node-local cache of post lookup answers (GET /api/public/post/{id}), so a hot post is served
// by the HTTP edge without a database round trip (ARCHITECTURE.md, "Hot path"). The handler fills
// it with the exact JSON it answered; an entry lives lookupCacheMs, so a takedown or a new stamp
// shows within that long on every other node; the node whose Post entity made the change forgets
// the post at once (`forget`). Bounded: the oldest entries go first. One per process.
import type { CachedAnswer } from "../../platform/http/ServiceEdge.ts"
import { corsHeaders } from "../../platform/http/openCors.ts"

export const lookupCacheMs = 2_000
export const lookupCacheEntriesMax = 10_000
const prefix = "/api/public/post/"

export interface LookupCacheShape {
  readonly get: (path: string, host: string | undefined) => CachedAnswer | undefined
  readonly put: (id: string, host: string | undefined, body: string) => void
  /** Drops every host's entry for this id (a post's short or long id). */
  readonly forget: (id: string) => void
}

export const makeLookupCache = (now: () => number = Date.now): LookupCacheShape => {
  const entries = new Map<string, { readonly at: number; readonly answer: CachedAnswer }>()
  return {
    get: (path, host) => {
      if (!path.startsWith(prefix)) return undefined
      const key = `${host ?? ""} ${path.slice(prefix.length)}`
      const hit = entries.get(key)
      if (hit === undefined) return undefined
      if (now() - hit.at >= lookupCacheMs) {
        entries.delete(key)
        return undefined
      }
      return hit.answer
    },
    put: (id, host, body) => {
      if (entries.size >= lookupCacheEntriesMax) entries.delete(entries.keys().next().value!)
      entries.set(`${host ?? ""} ${id}`, { at: now(), answer: { body, headers: corsHeaders } })
    },
    forget: (id) => {
      for (const key of entries.keys()) if (key.endsWith(` ${id}`)) entries.delete(key)
    }
  }
}

/** This process's cache: the social listener's edge and handlers, and the Post entity, share it. */
export const lookupCache = makeLookupCache()
