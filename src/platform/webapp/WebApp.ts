// A service's web app on its own listener (issue 24): the HTML shell at /app/ and /app/sign-in,
// its script bundled once at start by esbuild from the service's browser entry (with the shared
// client code and the `qrcode` library: nothing from a CDN), the shared stylesheet, and
// /favicon.ico. Every page carries a strict Content-Security-Policy: scripts and styles only from
// this origin, no inline script, no framing. The service gives its title and its entry file.
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { faviconIco } from "./favicon.ts"
import { stylesheetPath } from "./publicPages.ts"

export const contentSecurityPolicy = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "media-src 'self' blob:",
  "connect-src 'self'", "frame-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"
].join("; ")

/** Headers of every app page and asset. */
export const pageHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-store"
}

const stylesheet = readFileSync(fileURLToPath(new URL("./client/app.css", import.meta.url)), "utf8")
const favicon = faviconIco()

export interface WebAppOptions {
  /** "Exchange", "Token desk", "Social". */
  readonly title: string
  /** The service's browser entry module (absolute path). */
  readonly entry: string
}

const shell = (title: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Shardline ${title}</title><link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="${stylesheetPath}">
<script type="module" src="/app/app.js"></script></head>
<body><main id="main"><p>Loading…</p><noscript>This page needs JavaScript.</noscript></main></body></html>`

/** Bundles one browser entry for the page (ES module, minified). */
export const bundleScript = (entry: string) =>
  Effect.tryPromise({
    try: async () => {
      const esbuild = await import("esbuild")
      const out = await esbuild.build({ entryPoints: [entry], bundle: true, write: false, format: "esm", platform: "browser", minify: true, target: "es2020", logLevel: "silent" })
      return out.outputFiles[0]!.text
    },
    catch: (e) => new Error(`web app bundle of ${entry} failed: ${String(e)}`)
  }).pipe(Effect.orDie)

/** The routes of a web app (for a listener's `routes`). */
export const webAppRoutes = (options: WebAppOptions) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const script: string = yield* bundleScript(options.entry)
      const html = shell(options.title)
      const page = () => Effect.succeed(HttpServerResponse.text(html, { contentType: "text/html; charset=utf-8", headers: pageHeaders }))
      yield* router.get("/app/", page())
      yield* router.get("/app/sign-in", page())
      yield* router.get("/app/app.js", Effect.succeed(HttpServerResponse.text(script, { contentType: "text/javascript; charset=utf-8", headers: pageHeaders })))
      yield* router.get(stylesheetPath, Effect.succeed(HttpServerResponse.text(stylesheet, { contentType: "text/css; charset=utf-8", headers: pageHeaders })))
      yield* router.get("/favicon.ico", Effect.succeed(HttpServerResponse.uint8Array(favicon, { contentType: "image/x-icon", headers: { "cache-control": "public, max-age=86400" } })))
    }))
